/* istr.h: interned strings, shared by every struct that holds the same text.
 *
 * A cluster repeats a few strings tens of thousands of times (each device's vendor, model,
 * driver, firmware, runtime, its peaks' precisions and units, PCI ids and names): an interned
 * string is stored once, with a count of its holders. The model's fields that hold them are
 * typed `const char *`, so that a plain free() or an edit in place of one does not compile;
 * every holder releases its reference with xp_istr_drop, which also frees a plain heap copy
 * (xp_strdup) put there by code that did not intern: either kind may be assigned, and both are
 * released the same way. Thread-safe (agent replies are decoded on polling threads). */
#ifndef XP_ISTR_H
#define XP_ISTR_H

#include <stddef.h>

/* The interned copy of s, one more reference to it; NULL for NULL. */
const char *xp_istr(const char *s);
/* The interned copy of the n bytes at s (no NUL among them); never NULL. */
const char *xp_istrn(const char *s, size_t n);
/* Adds k references to s, an interned string the caller holds a reference to: for a decoder
 * that counts its holders first and registers them in one go (model_json.c). */
void xp_istr_hold(const char *s, size_t k);
/* Releases one reference to s (interned) or frees s (a plain heap copy); NULL is fine. */
void xp_istr_drop(const char *s);
/* Replaces *field with an interned copy of s (NULL for NULL), releasing what it held. */
void xp_istr_set(const char **field, const char *s);
/* Distinct interned strings alive, and the references to them (for tests and benches). */
void xp_istr_stats(size_t *strings, size_t *refs);

#endif
