/* validate.h: the validation matrix: which (environment, workload case) pairs are
 * proven, layer by layer, with evidence, kept in the store.
 *
 * An environment is vendor, model, driver (and firmware, runtime when known); its id
 * is "vendor:model:driver[:firmware:runtime]". A case is a workload (image, model,
 * data version, entry point, acceptance rule, team). Each cell has five layers,
 * discovered < schedulable < launches < executes < accepted; a layer may only be
 * recorded pass while every lower layer is pass. Every change is audited. */
#ifndef XP_VALIDATE_H
#define XP_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "model.h"
#include "sha256.h"
#include "store.h"
#include "xp.h"

/* Schema tag of the import/export document. */
#define XP_VALIDATE_SCHEMA "xpool.validation/v1"
/* Most output a probe (`validate run`) may write to its log; more is cut and fails the run. */
#define XP_VALIDATE_MAX_LOG ((size_t)16 << 20)
/* Longest case name: it goes into log file names and audit targets. */
#define XP_CASE_NAME_MAX 64

/* The five layers, lowest first. */
enum xp_layer {
	XP_LAYER_DISCOVERED,
	XP_LAYER_SCHEDULABLE,
	XP_LAYER_LAUNCHES,
	XP_LAYER_EXECUTES,
	XP_LAYER_ACCEPTED,
	XP_LAYER_COUNT
};

/* A layer's state. */
enum xp_vstatus {
	XP_V_UNTESTED,
	XP_V_PASS,
	XP_V_FAIL,
	XP_V_STALE,
	XP_V_COUNT
};

/* An environment. */
struct xp_env {
	char *id;        /* "NVIDIA:H100 80GB HBM3:535.54.03" */
	char *vendor, *model, *driver;
	char *firmware, *runtime; /* NULL when not known */
	bool declared;   /* declared by hand rather than discovered */
	time_t first_seen; /* when it entered the store, 0 when not known */
	time_t last_seen; /* last time discovery saw it, 0 when never */
};

/* A workload case. */
struct xp_case {
	char *name;
	char *image, *model, *data, *acceptance, *team; /* NULL when not given */
	char **entry;    /* the probe command as an argv (NULL-terminated), NULL when none */
	time_t created;
};

/* The state of one layer of one cell, with its evidence (the latest record). */
struct xp_evidence {
	int64_t id;      /* the results row, 0 when untested */
	int layer;       /* enum xp_layer */
	int status;      /* enum xp_vstatus */
	time_t time;     /* 0 when untested */
	char *actor, *note, *log_path, *log_sha256, *node; /* NULL when not given */
	char *driver, *firmware; /* the environment as it was when recorded */
};

/* One cell: an environment and a case, five layers (layers[l].layer == l). */
struct xp_cell {
	size_t env, kase; /* indexes into the matrix's envs and cases */
	struct xp_evidence layers[XP_LAYER_COUNT];
};

/* The whole matrix: envs down, cases across; cells[env * n_cases + case]. */
struct xp_matrix {
	struct xp_env *envs;
	size_t n_envs;
	struct xp_case *cases;
	size_t n_cases;
	struct xp_cell *cells;
	void *arena;     /* private: the cells' strings live here, freed at once */
};

/* "discovered", "schedulable", "launches", "executes", "accepted". */
const char *xp_layer_name(int layer);
/* Parses a layer name (a unique prefix is enough); -1 when unknown. */
int xp_layer_parse(const char *s);
/* "untested", "pass", "fail", "stale". */
const char *xp_vstatus_name(int status);
/* Parses a status name; -1 when unknown. */
int xp_vstatus_parse(const char *s);
/* The one-letter mark of a status, readable without colour: 'P', 'F', '.', 'S'. */
char xp_vstatus_mark(int status);
/* The id of an environment (firmware and runtime may be NULL); caller frees.
 * "vendor:model:driver" when neither firmware nor runtime is known, else
 * "vendor:model:driver:firmware:runtime" with an empty field for the unknown one
 * ("NVIDIA:H100:535.54.03:96.00.5E:" has no known runtime), so that the field
 * count alone says which is which. */
char *xp_env_id(const char *vendor, const char *model, const char *driver, const char *firmware,
		const char *runtime);
/* An environment id as people read it: an empty firmware or runtime field as "-"
 * ("NVIDIA:H100:535.54.03:96.00.5E:-"), not a bare ':'; xp_validate_env_resolve takes this
 * form too. Caller frees. */
char *xp_env_id_show(const char *id);

/* Flags of xp_validate_sync. */
enum {
	XP_SYNC_FILES = 1, /* count nodes read from files too: the user asked (`validate sync`, `record`) */
};

/* Records what inventory shows, in one transaction. Nodes that are unreachable or down are
 * skipped (they show what they had, not what they have); devices without vendor, model and
 * driver too. Then:
 * 0. when none of what follows would change anything, nothing is written (not even
 *    last_seen): a console refreshing an unchanged cluster writes no row;
 * 1. every shown environment is upserted (last_seen = now; new ones audited "env.discover",
 *    with the node and its source);
 * 2. staleness: each cell layer whose latest record is pass, taken on a node of c that now
 *    has devices of the environment's vendor and model but none with the record's driver and
 *    firmware, gets a stale row (actor "discovery", note "driver A -> B on NODE (seen by SOURCE)", the node's
 *    new versions) and an audit row "validate.stale" with the pass it replaces. A node
 *    without such devices any more is not a version change and stales nothing;
 * 3. the discovered layer is set pass (actor "discovery", node and versions of the first
 *    node showing it) for every case where it is not pass, one audit row per environment
 *    ("validate.discover"). This overrides a fail recorded by hand on the discovered layer:
 *    that layer belongs to the inventory.
 * Staleness runs before discovery so that evidence from a changed node turns stale even
 * when another node still shows the environment (which then passes it again). Running it
 * twice with the same cluster writes nothing the second time.
 * Which nodes count: live ones (not down or unreachable) and, unless flags has
 * XP_SYNC_FILES, not read from a file (xp_node.from_file); and only real machines (not
 * sim gen nodes, source "sim") turn evidence stale, since evidence is made stale only by
 * the node it was taken on. */
int xp_validate_sync(struct xp_store *s, const struct xp_cluster *c, time_t now, unsigned flags, struct xp_err *err);
/* 1 when xp_validate_sync with these flags would write, 0 when not; -1 with err set. Reads only. */
int xp_validate_sync_pending(struct xp_store *s, const struct xp_cluster *c, unsigned flags, struct xp_err *err);
/* Declares an environment by hand (audited); e->id is ignored (derived from the fields).
 * 0 when created or newly marked declared, 1 when it was declared already (nothing changed). */
int xp_validate_env_declare(struct xp_store *s, const struct xp_env *e, struct xp_err *err);
/* Every environment, sorted by id. Free with xp_env_list_free. */
int xp_validate_env_list(struct xp_store *s, struct xp_env **envs, size_t *n, struct xp_err *err);
/* Frees an environment's fields. */
void xp_env_clear(struct xp_env *e);
/* Frees what xp_validate_env_list returned. */
void xp_env_list_free(struct xp_env *envs, size_t n);
/* Resolves an environment id or unique prefix to the full id (caller frees); errors name the candidates. */
char *xp_validate_env_resolve(struct xp_store *s, const char *id_or_prefix, struct xp_err *err);

/* Adds a case (audited); an existing name is an error. */
int xp_validate_case_add(struct xp_store *s, const struct xp_case *c, struct xp_err *err);
/* Removes a case and its results (audited). */
int xp_validate_case_rm(struct xp_store *s, const char *name, struct xp_err *err);
/* Reads a case; 0 with *c filled, -1 with err (unknown case). Free with xp_case_clear. */
int xp_validate_case_get(struct xp_store *s, const char *name, struct xp_case *c, struct xp_err *err);
/* Frees a case's fields. */
void xp_case_clear(struct xp_case *c);
/* Every case, sorted by name. Free with xp_case_list_free. */
int xp_validate_case_list(struct xp_store *s, struct xp_case **cases, size_t *n, struct xp_err *err);
/* Frees what xp_validate_case_list returned. */
void xp_case_list_free(struct xp_case *cases, size_t n);

/* Records one layer of one cell (env: id or unique prefix): status pass or fail, with a note,
 * a log file (a regular file, read and hashed with SHA-256 first: one that cannot be read is
 * an error and nothing is recorded; stored by absolute path) and the node. The record keeps
 * the environment's driver and firmware (what staleness compares). A pass on a layer whose
 * lower layers are not all pass is refused ("cannot record launches pass: schedulable is
 * untested"); a fail is always allowed and changes nothing above it. One transaction, or a
 * savepoint inside the caller's; audited "validate.record" with before and after. */
int xp_validate_record(struct xp_store *s, const char *env, const char *kase, int layer, int status,
		       const char *note, const char *log_path, const char *node, struct xp_err *err);
/* Runs the case's entry command on this node (argv, no shell; a clean environment plus
 * XPOOL_CASE, XPOOL_ENV, XPOOL_LAYER, XPOOL_NODE; killed with its process group after
 * timeout_s; stdout and stderr, at most XP_VALIDATE_MAX_LOG bytes, into a new 0600 file
 * log_dir/CASE_ENV_TIME.log, log_dir made 0700), then records layer pass (exit 0) or fail
 * (note: exit status, signal, timeout or output cut) with the log and its digest. Refused
 * before running when a pass could not be recorded, the case has no entry, or its program
 * is not found: then nothing runs and nothing is recorded. 0 when a record was written,
 * pass or fail. */
int xp_validate_run(struct xp_store *s, const char *kase, const char *env, int layer, const char *node,
		    double timeout_s, const char *log_dir, struct xp_err *err);

/* The default directory of probe logs: logs/ next to the default database (caller frees). */
char *xp_validate_default_log_dir(void);
/* Writes len bytes of a probe's output to a new 0600 file log_dir/CASE_ENV_TIME.log (log_dir
 * made 0700 when missing), for evidence that arrives from elsewhere (an agent's probe); *path
 * gets its name (caller frees). -1 with err set, and no file left, on failure. */
int xp_validate_log_write(const char *log_dir, const char *kase, const char *env, const char *text, size_t len,
			  char **path, struct xp_err *err);
/* The current state of one cell (env: id or unique prefix): layers[i] for layer i; free the
 * strings with xp_evidence_clear(layers, XP_LAYER_COUNT). */
int xp_validate_cell(struct xp_store *s, const char *env, const char *kase,
		     struct xp_evidence layers[XP_LAYER_COUNT], struct xp_err *err);

/* Reads the whole matrix: envs sorted by id, cases by name, every cell's current state
 * (one read transaction). Matrix cells carry what the matrix shows: id, status, time, actor,
 * note, log_sha256, node; log_path, driver and firmware are NULL there (xp_validate_cell and
 * xp_validate_history have them). */
int xp_validate_matrix(struct xp_store *s, struct xp_matrix *m, struct xp_err *err);
/* Frees a matrix. */
void xp_matrix_free(struct xp_matrix *m);
/* Every record of one cell, oldest first (all layers; evidence.layer says which). */
int xp_validate_history(struct xp_store *s, const char *env, const char *kase, struct xp_evidence **rows,
			size_t *n, struct xp_err *err);
/* Frees evidence rows: their strings, then the array (xp_validate_cell's array is the
 * caller's: call xp_evidence_clear on it instead). */
void xp_evidence_free(struct xp_evidence *rows, size_t n);
/* Frees the strings of n evidence rows, not the array. */
void xp_evidence_clear(struct xp_evidence *rows, size_t n);
/* The highest layer proven (all layers up to it pass) for env (the exact id) and case, or for
 * any case when kase is NULL; -1 when none, or on error. What placement asks. */
int xp_validate_highest(struct xp_store *s, const char *env, const char *kase);

/* JSON encodings shared by the command, the export and the audit rows (caller owns the
 * reference). Times are seconds since 1970, null when not known. */
json_t *xp_env_to_json(const struct xp_env *e);
json_t *xp_case_to_json(const struct xp_case *c);
/* {"status", "time", "actor", "note", "log_sha256", "node"}; full adds "layer", "log_path",
 * "driver" and "firmware". */
json_t *xp_evidence_to_json(const struct xp_evidence *e, bool full);
/* {"environments": [...], "cases": [...], "cells": [{"env", "case", "layers": {"discovered":
 * evidence, ...}}]}: every cell, untested ones included. */
json_t *xp_matrix_to_json(const struct xp_matrix *m);

/* Writes every environment, case and record as JSON ("xpool.validation/v1"). */
int xp_validate_export(struct xp_store *s, FILE *f, struct xp_err *err);
/* Reads such a document: all or nothing (one transaction); errors start with name and give
 * the JSON path ("x.json: $.results[3].layer: unknown layer deployed"). Known environments
 * are kept as they are; a case that exists already is an error; results are appended
 * (history from elsewhere: the layer rule does not apply). Audited "validate.import". */
int xp_validate_import(struct xp_store *s, const char *text, size_t len, const char *name, struct xp_err *err);

#endif
