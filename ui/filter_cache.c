/* filter_cache.c: see filter_cache.h. A handful of field tables exist (one per kind of row), so
 * a small array searched by pointer is all the lookup needs. */
#include "filter_cache.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS 16

struct slot {
	const struct xp_filter_field *fields;
	struct xp_filter *f;   /* the last expression that parsed, NULL for none */
	unsigned gen;          /* the text generation f and err are for */
	bool used;
	char err[256];
};

struct xp_filter_cache {
	char *text;
	unsigned gen;
	struct slot s[SLOTS];
};

struct xp_filter_cache *xp_filter_cache_new(void)
{
	struct xp_filter_cache *fc = xp_calloc(1, sizeof *fc);
	fc->text = xp_strdup("");
	fc->gen = 1;
	return fc;
}

void xp_filter_cache_free(struct xp_filter_cache *fc)
{
	if (!fc)
		return;
	for (size_t i = 0; i < SLOTS; i++)
		xp_filter_free(fc->s[i].f);
	free(fc->text);
	free(fc);
}

void xp_filter_cache_text(struct xp_filter_cache *fc, const char *text)
{
	if (!text)
		text = "";
	if (!strcmp(fc->text, text))
		return;
	free(fc->text);
	fc->text = xp_strdup(text);
	fc->gen++;
	if (!*text)
		for (size_t i = 0; i < SLOTS; i++) {
			xp_filter_free(fc->s[i].f);
			fc->s[i].f = NULL;
			fc->s[i].err[0] = '\0';
			fc->s[i].gen = fc->gen;
		}
}

static struct slot *slot_for(struct xp_filter_cache *fc, const struct xp_filter_field *fields)
{
	struct slot *free_slot = NULL;
	for (size_t i = 0; i < SLOTS; i++) {
		if (fc->s[i].used && fc->s[i].fields == fields)
			return &fc->s[i];
		if (!fc->s[i].used && !free_slot)
			free_slot = &fc->s[i];
	}
	if (!free_slot) {
		/* More kinds of rows than slots: never in this program, but stay correct. */
		free_slot = &fc->s[SLOTS - 1];
		xp_filter_free(free_slot->f);
	}
	*free_slot = (struct slot){.fields = fields, .used = true};
	return free_slot;
}

static struct slot *current(struct xp_filter_cache *fc, const struct xp_filter_field *fields)
{
	struct slot *s = slot_for(fc, fields);
	if (s->gen == fc->gen)
		return s;
	s->gen = fc->gen;
	s->err[0] = '\0';
	if (!*fc->text)
		return s;
	struct xp_err err = {{0}};
	struct xp_filter *f = xp_filter_compile(fc->text, fields, &err);
	if (f) {
		xp_filter_free(s->f);
		s->f = f;
	} else {
		/* A long message (the field list) is cut: the status line shows its start. */
		size_t n = strnlen(err.msg, sizeof s->err - 1);
		memcpy(s->err, err.msg, n);
		s->err[n] = '\0';
	}
	return s;
}

const struct xp_filter *xp_filter_cache_get(struct xp_filter_cache *fc, const struct xp_filter_field *fields)
{
	return current(fc, fields)->f;
}

const char *xp_filter_cache_error(struct xp_filter_cache *fc, const struct xp_filter_field *fields)
{
	struct slot *s = current(fc, fields);
	return s->err[0] ? s->err : NULL;
}
