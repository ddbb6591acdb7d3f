/* validate_int.h: what the validate_*.c files share (internal; the API is validate.h):
 * bounds on stored text, column lists, and small helpers over sqlite and jansson. */
#ifndef XP_VALIDATE_INT_H
#define XP_VALIDATE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <sqlite3.h>

#include "store.h"
#include "validate.h"

/* Bounds on what users and documents may store: long enough for any real value,
 * short enough that listings stay readable. */
#define FIELD_MAX 256          /* vendor, model, driver, firmware, runtime, node, actor */
#define TEXT_MAX 4096          /* notes, acceptance rules, images, paths */
#define ENTRY_MAX_ARGS 256     /* words in a probe command */

/* The environment columns, in the order env_read expects. */
#define ENV_COLS "id, vendor, model, driver, firmware, runtime, declared, first_seen, last_seen"
/* The evidence columns, in the order xpv_ev_read expects, after the id. */
#define EV_COLS "layer, status, time, actor, note, log_path, log_sha256, node, driver, firmware"

/* True when s is given and not empty. */
static inline bool known(const char *s)
{
	return s && *s;
}

/* NULL for an unknown value, so that "" and NULL store alike. */
static inline const char *opt(const char *s)
{
	return known(s) ? s : NULL;
}

/* Equality where NULL and "" both mean "not known". */
static inline bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* A JSON value as compact text for the audit log; consumes j. */
char *xpv_jdump(json_t *j);
/* A time as JSON: seconds since 1970, null when not known. */
json_t *xpv_jtime(time_t t);
/* Checks a user-given text: required or not, at most max bytes, one printable line. */
int xpv_check_text(const char *what, const char *v, size_t max, bool required, struct xp_err *err);
/* Starts a change: a transaction, or a savepoint inside the caller's (*nested). */
int xpv_tx_begin(struct xp_store *s, bool *nested, struct xp_err *err);
/* Commits what xpv_tx_begin started. */
int xpv_tx_commit(struct xp_store *s, bool nested, struct xp_err *err);
/* Undoes what xpv_tx_begin started. */
void xpv_tx_rollback(struct xp_store *s, bool nested);

/* Reads one environment: 1 found, 0 not, -1 error. */
int xpv_env_get(struct xp_store *s, const char *id, struct xp_env *e, struct xp_err *err);

/* 1 when the case exists, 0 when not, -1 on error. */
int xpv_case_exists(struct xp_store *s, const char *name, struct xp_err *err);
/* Checks a case's fields before it is stored (add and import share it). */
int xpv_check_case(const struct xp_case *c, struct xp_err *err);
/* Inserts a checked case; the caller holds the transaction. */
int xpv_case_insert(struct xp_store *s, const struct xp_case *c, struct xp_err *err);

/* Reads "id, " EV_COLS from a row. */
void xpv_ev_read(sqlite3_stmt *st, struct xp_evidence *e);
/* The latest record of each layer of one cell; layers without one are untested. */
int xpv_cell_read(struct xp_store *s, const char *env, const char *kase, struct xp_evidence ev[XP_LAYER_COUNT],
		  struct xp_err *err);
/* The lowest layer under `layer` that is not pass, or -1 when all are. */
int xpv_lower_gap(const struct xp_evidence ev[XP_LAYER_COUNT], int layer);
/* Inserts one results row; its id, or -1. */
int64_t xpv_result_insert(struct xp_store *s, const char *env, const char *kase, const struct xp_evidence *e,
			  struct xp_err *err);
/* Audits a change of one cell layer (action "validate.record", ...): the record replaced
 * (NULL when none) and the new one, both in full. */
int xpv_audit_cell(struct xp_store *s, const char *action, const char *env, const char *kase,
		   const struct xp_evidence *before, const struct xp_evidence *after, struct xp_err *err);

#endif
