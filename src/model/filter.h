/* filter.h: the one filter language of the console's `/`, the command line's `--filter`
 * and batch scripts (xpool(1), FILTER EXPRESSIONS).
 *
 *   expr    := or
 *   or      := and ( '|' and )*
 *   and     := unary ( '&' unary )*          (two terms side by side also mean '&')
 *   unary   := '!' unary | '(' expr ')' | term
 *   term    := FIELD OP VALUE | WORD
 *   OP      := '=' | '==' | ':' | '!=' | '<' | '<=' | '>' | '>='
 *
 * A FIELD is a known name (`temp`, `model`, `label.KEY`...); a VALUE is a number (with an
 * optional unit suffix the field knows: `80G`, `300W`, `85C`, `50%`) or a string, quoted with
 * '...' or "..." when it holds spaces or operators; `=`, `==` and `:` compare strings as a
 * case-insensitive glob (`model:H100*`). A bare WORD matches when the row's text holds it
 * (case-insensitive), as the console's filter always did. Errors name the column (1-based) of
 * the expression where they are found. */
#ifndef XP_FILTER_H
#define XP_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"
#include "xp.h"

/* Longest expression accepted, bytes. */
#define XP_FILTER_MAX_LEN 4096
/* Deepest nesting of parentheses and '!' accepted. */
#define XP_FILTER_MAX_DEPTH 64

/* A compiled expression (opaque). */
struct xp_filter;

/* What a field of one row holds. */
enum xp_fval_kind {
	XP_FV_NONE, /* the row has no value for it (not known): every comparison but != is false */
	XP_FV_NUM,
	XP_FV_STR
};

/* One field's value for the row being matched. */
struct xp_fval {
	int kind;        /* enum xp_fval_kind */
	double num;      /* XP_FV_NUM */
	const char *str; /* XP_FV_STR (borrowed) */
};

/* A field a kind of row offers: its name and whether it is a number. */
struct xp_filter_field {
	const char *name;   /* "temp"; a name ending in '.' takes any suffix ("label.") */
	bool numeric;       /* compared as a number (a value with a unit suffix is scaled) */
	const char *help;   /* one line for the manual and errors */
	const char *unit;   /* what a numeric value is counted in: "MiB" (takes K M G T suffixes),
			     * "%", "C", "W" (takes kW); NULL: a plain number */
};

/* Looks up field (a name of the table the expression was compiled with, or "label.KEY") on
 * row; fills *out and returns true, or returns false when the row cannot say (as XP_FV_NONE). */
typedef bool (*xp_filter_get)(void *row, const char *field, struct xp_fval *out);

/* Compiles expr against the fields a kind of row offers ({NULL}-terminated; NULL: only bare
 * words). Returns NULL with err set ("column 7: unknown field 'tmp' (fields: ...)") on an
 * empty, malformed, too long or too deep expression. */
struct xp_filter *xp_filter_compile(const char *expr, const struct xp_filter_field *fields, struct xp_err *err);
/* Frees a compiled expression; NULL is fine. */
void xp_filter_free(struct xp_filter *f);
/* True when the expression holds for row: fields through get, bare words against text (NULL
 * text: a bare word never matches). */
bool xp_filter_eval(const struct xp_filter *f, xp_filter_get get, void *row, const char *text);
/* True when the expression uses only bare words (a plain text search). */
bool xp_filter_is_text(const struct xp_filter *f);

/* The fields of nodes and their devices (state, health, model, vendor, rack, zone, label.KEY,
 * util, mem, temp, power, free, numa, ...). */
extern const struct xp_filter_field xp_filter_node_fields[];
/* True when node n matches: a node field is the node's own; a device field (util, temp, numa,
 * model...) is each device's in turn, and the node matches when one device makes the whole
 * expression true (`temp>85 & numa==0`: one device both hot and on NUMA 0). text is the node's
 * searchable text for bare words (NULL: its name). */
bool xp_filter_node(const struct xp_filter *f, const struct xp_node *n, const char *text);
/* The text a bare word looks in for node n, one field a line (name, state, device vendors,
 * models and health, zone, rack, switch, label values): caller frees. */
char *xp_filter_node_text(const struct xp_node *n);
/* Devices of n free to place on now: the node up or degraded, the device without allocation
 * and not failed (the `free` field, and what the console counts as free). */
size_t xp_node_free_devices(const struct xp_node *n);
/* True when device d of n is free in that sense (one rule for the filter, the map's FREE column
 * and the fleet view). */
bool xp_device_is_free(const struct xp_node *n, const struct xp_device *d);
/* True when device d of node n makes the expression true (device rows, the device view). */
bool xp_filter_device(const struct xp_filter *f, const struct xp_node *n, const struct xp_device *d,
		      const char *text);

#endif
