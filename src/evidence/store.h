/* store.h: the sqlite database: schema versions with forward migrations, the
 * audit log, benchmark baselines, inventory snapshots and metric samples. The
 * validation matrix (validate.h) keeps its tables here too.
 *
 * WAL mode, foreign keys on, a busy timeout so that two xpool processes on one
 * database both succeed, prepared statements only, and every multi-row change
 * in one transaction (xp_store_begin / xp_store_commit). */
#ifndef XP_STORE_H
#define XP_STORE_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "model.h"
#include "xp.h"

/* The schema version this xpool writes (PRAGMA user_version). */
#define XP_STORE_VERSION 5
/* How long a writer waits for another process's lock before giving up, ms. */
#define XP_STORE_BUSY_MS 10000
/* Default retention of metric samples and snapshots, days (setting "retention_days"). */
#define XP_STORE_RETENTION_DAYS 7

/* An open database. */
struct xp_store {
	sqlite3 *db;
	char *path;       /* as given; ":memory:" for a throwaway one */
	char *actor;      /* who changes things: $XPOOL_ACTOR, else the user name */
	int version;      /* schema version found at open, before migrating */
	bool read_only;   /* opened for reading (xp_store_open_read, _existing): every write fails */
	bool no_write;    /* xp_store_open found the file or its directory read-only here: opened for
			   * reading, and every write fails saying so */
	char *damage;     /* the first corruption a read without an error return met (xp_store_damage) */
};

/* One audit row. */
struct xp_audit {
	int64_t id;
	time_t time;
	char *actor, *action, *target;
	char *before, *after; /* JSON text, NULL when there was nothing */
};

/* A benchmark baseline: a measured ECU coefficient for (model, driver). */
struct xp_baseline {
	int64_t id;
	char *model, *driver, *benchmark, *actor;
	double coefficient;
	time_t time;
	bool verified;
};

/* The default database path: $XDG_STATE_HOME/xpool/xpool.db (or ~/.local/state/...); caller frees. */
char *xp_store_default_path(void);
/* Opens (creating directories 0700 and the file as needed) and migrates the database at path
 * (NULL: the default; ":memory:" for a throwaway one). NULL with err set on failure, including
 * a database written by a newer xpool. A file the user may only read (file mode, directory,
 * mount) is opened for reading when its schema needs no migration: reads work, and each write
 * fails naming the file and the write. */
struct xp_store *xp_store_open(const char *path, struct xp_err *err);
/* The oldest schema version read commands use without migrating: each migration so far only
 * added, so everything a reader queries is there from version 1 on. Raise it when a migration
 * changes a table or column that readers use. */
#define XP_STORE_READ_MIN 1
/* Opens an existing database for reading only (NULL: the default path): no migration, no
 * write, nothing created, so it works on a file or directory the user may only read.
 * A WAL database is read through its -wal and -shm files; when those cannot be used
 * (no -wal file, and the -shm cannot be created because the directory is not writable)
 * it is opened immutable (the file alone holds every committed change then; a writer that
 * starts meanwhile is not seen). Schema versions XP_STORE_READ_MIN to XP_STORE_VERSION
 * are read as they are (a read-only file cannot be upgraded by its reader); older, negative
 * and newer ones are refused with a message. NULL with err set on failure; when it failed
 * because there is no database yet, xp_store_missing(path) is true. Any write through the
 * store fails with a message naming the file. */
struct xp_store *xp_store_open_read(const char *path, struct xp_err *err);
/* True when there is no file at path (NULL: the default path): how a caller tells "no
 * database yet" (say so, or read as empty) from a failure after xp_store_open_read. */
bool xp_store_missing(const char *path);
/* As xp_store_open_read but any schema version, even none (for `db info` and `db check` on any file). */
struct xp_store *xp_store_open_existing(const char *path, struct xp_err *err);
/* Checks that the tables are those of the schema version the file's user_version says (what
 * migrating and reading check before they trust it; for `db check`); -1 with err saying which
 * version the file claims and which its tables are. */
int xp_store_check_schema(struct xp_store *s, struct xp_err *err);
/* The first corruption (SQLITE_CORRUPT, SQLITE_NOTADB) met by a read that has no error return
 * (xp_baseline_coefficient, hence the normalization hook, and xp_audit_last_id), as a message
 * naming the file and `xpool db check`; NULL when none. Check it after such reads. */
const char *xp_store_damage(const struct xp_store *s);
/* Closes the database; NULL is fine. */
void xp_store_close(struct xp_store *s);

/* Starts a write transaction (BEGIN IMMEDIATE, so the busy timeout applies up front). */
int xp_store_begin(struct xp_store *s, struct xp_err *err);
/* Commits; on failure rolls back and sets err. */
int xp_store_commit(struct xp_store *s, struct xp_err *err);
/* Rolls back whatever the transaction did. */
void xp_store_rollback(struct xp_store *s);
/* Sets err from the database's last error, prefixed by the file and what was being done; a
 * write refused because the database is read-only says so, and corruption (SQLITE_CORRUPT,
 * SQLITE_NOTADB) adds "run `xpool db check`". Returns -1. */
int xp_store_fail(struct xp_store *s, struct xp_err *err, const char *doing);
/* Finalizes st, whose last sqlite3_step returned rc: 0 when that was SQLITE_DONE, else -1 with
 * err set as xp_store_fail does (before finalizing, so the message is the step's). */
int xp_store_finish(struct xp_store *s, sqlite3_stmt *st, int rc, struct xp_err *err, const char *doing);
/* Sets *has to whether the file has a table called name: a file read without migrating may
 * predate the tables a later schema version added. -1 with err on a read failure. */
int xp_store_has_table(struct xp_store *s, const char *name, bool *has, struct xp_err *err);
/* Prepares sql; on failure *st is NULL and err says what we were doing (as xp_store_fail). */
int xp_store_prep(struct xp_store *s, const char *sql, sqlite3_stmt **st, struct xp_err *err, const char *doing);
/* Binds v as text, or NULL when v is NULL (so that an unknown value stores as NULL). */
void xp_store_bind_text(sqlite3_stmt *st, int i, const char *v);
/* A copy of a text column (the caller frees it), NULL for NULL. */
char *xp_store_col_text(sqlite3_stmt *st, int i);

/* Applies the migrations from version `from` (0 = empty) up to `to` (tests make old databases).
 * Before each step, the tables must be those of the version user_version claims: a negative or
 * unknown version, or tables of another version, is refused with what was found and expected. */
int xp_store_migrate(struct xp_store *s, int from, int to, struct xp_err *err);

/* Appends one audit row (inside the caller's transaction, if any). before/after are JSON or NULL. */
int xp_audit_add(struct xp_store *s, const char *action, const char *target, const char *before,
		 const char *after, struct xp_err *err);
/* Reads audit rows with time >= since (0: all), oldest first, at most limit (0: all). */
int xp_audit_list(struct xp_store *s, time_t since, size_t limit, struct xp_audit **rows, size_t *n,
		  struct xp_err *err);
/* Reads audit rows with id > after_id, oldest first, at most limit (0: all). */
int xp_audit_list_after(struct xp_store *s, int64_t after_id, size_t limit, struct xp_audit **rows, size_t *n,
			struct xp_err *err);
/* The newest audit row's id, 0 when the log is empty. */
int64_t xp_audit_last_id(struct xp_store *s);
/* Frees what xp_audit_list returned. */
void xp_audit_free(struct xp_audit *rows, size_t n);

/* Records a baseline (audited). */
int xp_baseline_add(struct xp_store *s, const struct xp_baseline *b, struct xp_err *err);
/* The newest baseline for (model, driver), verified ones first; NAN when none. */
double xp_baseline_coefficient(struct xp_store *s, const char *model, const char *driver);
/* Lists every baseline, newest first. */
int xp_baseline_list(struct xp_store *s, struct xp_baseline **rows, size_t *n, struct xp_err *err);
/* Frees what xp_baseline_list returned. */
void xp_baseline_free(struct xp_baseline *rows, size_t n);
/* Makes normalization use this store's baselines for ECU coefficients (NULL: stop). */
void xp_store_use_baselines(struct xp_store *s);

/* Saves each node's inventory and a metric sample per device, then drops what is older than
 * the retention (one transaction). */
int xp_store_snapshot(struct xp_store *s, const struct xp_cluster *c, time_t now, struct xp_err *err);
/* One metric sample as `db snapshot` saved it (xp_store_samples): XP_NA where it was not known. */
struct xp_sample_row {
	time_t time;
	const char *node;   /* valid during the call only */
	const char *device; /* the device's PCI bus id, or "ACC<index>" when it has none */
	double util_pct, mem_used_mib, temp_c, power_w;
};
/* Calls fn for each sample with time >= since, oldest first, until fn returns non-zero (which
 * it returns); 0 when all were read, -1 with err set on a read failure. Only reads. */
int xp_store_samples(struct xp_store *s, time_t since, int (*fn)(void *arg, const struct xp_sample_row *r),
		     void *arg, struct xp_err *err);
/* Reads a setting into *value (NULL when unset; caller frees). -1 with err set when the
 * database cannot be read (corruption is an error, never "unset"). */
int xp_store_setting(struct xp_store *s, const char *key, char **value, struct xp_err *err);
/* Writes a setting (audited). */
int xp_store_set_setting(struct xp_store *s, const char *key, const char *value, struct xp_err *err);

#endif
