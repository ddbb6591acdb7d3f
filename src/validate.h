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
#include <stdio.h>
#include <time.h>

#include "model.h"
#include "store.h"
#include "xp.h"

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
	int layer;       /* enum xp_layer */
	int status;      /* enum xp_vstatus */
	time_t time;     /* 0 when untested */
	char *actor, *note, *log_path, *log_sha256, *node; /* NULL when not given */
	char *driver, *firmware; /* the environment as it was when recorded */
};

/* One cell: an environment and a case, five layers. */
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
};

/* "discovered", "schedulable", "launches", "executes", "accepted". */
const char *xp_layer_name(int layer);
/* Parses a layer name (a unique prefix is enough); -1 when unknown. */
int xp_layer_parse(const char *s);
/* "untested", "pass", "fail", "stale". */
const char *xp_vstatus_name(int status);
/* Parses a status name; -1 when unknown. */
int xp_vstatus_parse(const char *s);
/* The id of an environment (firmware and runtime may be NULL); caller frees. */
char *xp_env_id(const char *vendor, const char *model, const char *driver, const char *firmware,
		const char *runtime);

/* Records what inventory shows: upserts every device's environment, sets the discovered layer
 * pass for every case on environments present (evidence: the node), and marks stale every cell
 * whose evidence was taken on a node whose driver or firmware has since changed (audited with
 * the change). One transaction. */
int xp_validate_sync(struct xp_store *s, const struct xp_cluster *c, time_t now, struct xp_err *err);
/* Declares an environment by hand (audited). */
int xp_validate_env_declare(struct xp_store *s, const struct xp_env *e, struct xp_err *err);
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

/* Records one layer of one cell: status pass or fail, with a note, a log file (read and hashed
 * with SHA-256; an unreadable file is an error and nothing is recorded) and the node. A pass on
 * a layer whose lower layers are not all pass is refused with the reason. Audited. */
int xp_validate_record(struct xp_store *s, const char *env, const char *kase, int layer, int status,
		       const char *note, const char *log_path, const char *node, struct xp_err *err);
/* Runs the case's entry command on this node (argv, timeout, output captured to a log file in
 * log_dir), then records layer pass (exit 0) or fail with the log and its digest. */
int xp_validate_run(struct xp_store *s, const char *kase, const char *env, int layer, const char *node,
		    double timeout_s, const char *log_dir, struct xp_err *err);

/* Reads the whole matrix (current state of every cell). */
int xp_validate_matrix(struct xp_store *s, struct xp_matrix *m, struct xp_err *err);
/* Frees a matrix. */
void xp_matrix_free(struct xp_matrix *m);
/* Every record of one cell, oldest first (all layers; evidence.layer says which). */
int xp_validate_history(struct xp_store *s, const char *env, const char *kase, struct xp_evidence **rows,
			size_t *n, struct xp_err *err);
/* Frees evidence rows. */
void xp_evidence_free(struct xp_evidence *rows, size_t n);
/* The highest layer proven (all layers up to it pass) for env and case, or for any case when
 * kase is NULL; -1 when none. What placement asks. */
int xp_validate_highest(struct xp_store *s, const char *env, const char *kase);

/* Writes every environment, case and record as JSON ("xpool.validation/v1"). */
int xp_validate_export(struct xp_store *s, FILE *f, struct xp_err *err);
/* Reads such a document: all or nothing (one transaction); errors name the JSON path. */
int xp_validate_import(struct xp_store *s, const char *text, size_t len, const char *name, struct xp_err *err);

/* SHA-256 of a file as 64 hex digits into hex[65]; -1 with err when it cannot be read. */
int xp_sha256_file(const char *path, char hex[65], struct xp_err *err);

#endif
