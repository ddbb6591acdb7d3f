/* cmd_db.c: `xpool db info|check|backup FILE|vacuum`: the database itself. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "cmd.h"
#include "files.h"
#include "model_json.h"
#include "table.h"
#include "store.h"

static const char *const tables[] = {"environments", "cases", "results", "baselines", "audit",
				     "snapshots", "samples", "settings"};

/* The rows in table; -2 when this file has no such table (another schema version); -1 with
 * err set when it cannot be counted (corruption among others). */
static long long count_rows(struct xp_store *s, const char *table, struct xp_err *err)
{
	/* Table names come from our own list above, never from the user. */
	char sql[96], doing[64];
	/* NOT INDEXED: the rows themselves are counted (a covering index could hide a damaged
	 * table page from the count). */
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s NOT INDEXED", table);
	snprintf(doing, sizeof doing, "counting %s", table);
	sqlite3_stmt *st;
	if (xp_store_prep(s, sql, &st, err, doing) < 0)
		return sqlite3_extended_errcode(s->db) == SQLITE_ERROR ? -2 : -1;
	int rc = sqlite3_step(st);
	long long n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	if (xp_store_finish(s, st, rc == SQLITE_ROW ? SQLITE_DONE : rc, err, doing) < 0)
		return -1;
	return n;
}

static char *pragma_text(struct xp_store *s, const char *sql)
{
	sqlite3_stmt *st;
	char *v = NULL;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			v = xp_strdup((const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	return v;
}

static int db_info(struct xp_ctx *ctx, struct xp_store *s)
{
	struct stat st;
	char *mode = pragma_text(s, "PRAGMA journal_mode");
	bool sized = stat(s->path, &st) == 0;
	/* Rows per table, for both forms: a table this file lacks (another schema version) is
	 * -2 (null, or left out); one that cannot be read (a damaged page) is an error, never a
	 * silent gap. */
	enum { N_TABLES = sizeof tables / sizeof tables[0] };
	long long rows_in[N_TABLES];
	int rc = XP_EXIT_OK;
	for (size_t i = 0; i < N_TABLES; i++) {
		struct xp_err err = {{0}};
		rows_in[i] = count_rows(s, tables[i], &err);
		if (rows_in[i] == -1) {
			xp_ctx_error(ctx, "db info: %s", err.msg);
			rc = XP_EXIT_ERROR;
		}
	}
	if (ctx->json) {
		json_t *doc = json_object(), *rows = json_object();
		json_object_set_new(doc, "database", xp_json_str(s->path));
		json_object_set_new(doc, "size", sized ? json_integer((json_int_t)st.st_size) : json_null());
		json_object_set_new(doc, "schema_version", json_integer(s->version));
		json_object_set_new(doc, "schema_version_written", json_integer(XP_STORE_VERSION));
		json_object_set_new(doc, "journal", xp_json_str(mode));
		json_object_set_new(doc, "sqlite", json_string(sqlite3_libversion()));
		for (size_t i = 0; i < N_TABLES; i++)
			json_object_set_new(rows, tables[i], rows_in[i] >= 0 ? json_integer((json_int_t)rows_in[i]) : json_null());
		json_object_set_new(doc, "rows", rows);
		xp_print_json(ctx->out, doc);
		free(mode);
		return rc;
	}
	fprintf(ctx->out, "database   %s\n", s->path);
	if (sized)
		fprintf(ctx->out, "size       %lld bytes\n", (long long)st.st_size);
	fprintf(ctx->out, "schema     version %d (this xpool writes %d)\n", s->version, XP_STORE_VERSION);
	fprintf(ctx->out, "journal    %s\n", mode ? mode : "?");
	fprintf(ctx->out, "sqlite     %s\n", sqlite3_libversion());
	free(mode);
	for (size_t i = 0; i < N_TABLES; i++)
		if (rows_in[i] >= 0)
			fprintf(ctx->out, "%-10s %lld row%s\n", tables[i], rows_in[i], rows_in[i] == 1 ? "" : "s");
	return rc;
}

static int db_check(struct xp_ctx *ctx, struct xp_store *s)
{
	int rc = XP_EXIT_OK;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK) {
		xp_ctx_error(ctx, "db check: %s", sqlite3_errmsg(s->db));
		return XP_EXIT_ERROR;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *r = (const char *)sqlite3_column_text(st, 0);
		if (r && strcmp(r, "ok") != 0) {
			fprintf(ctx->out, "integrity: %s\n", r);
			rc = XP_EXIT_ERROR;
		}
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(s->db, "PRAGMA foreign_key_check", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			fprintf(ctx->out, "foreign key: row %lld of %s refers to a missing %s\n",
				(long long)sqlite3_column_int64(st, 1), sqlite3_column_text(st, 0),
				sqlite3_column_text(st, 2));
			rc = XP_EXIT_ERROR;
		}
		sqlite3_finalize(st);
	}
	/* The schema version the file claims must be the one its tables show: a user_version set
	 * by hand is refused by every command, so it is a problem here too. */
	struct xp_err err = {{0}};
	if (xp_store_check_schema(s, &err) < 0) {
		xp_ctx_error(ctx, "db check: %s", err.msg);
		rc = XP_EXIT_ERROR;
	}
	if (rc == XP_EXIT_OK)
		fprintf(ctx->out, "%s: ok\n", s->path);
	return rc;
}

static int db_backup(struct xp_ctx *ctx, struct xp_store *s, const char *file)
{
	/* Create the file ourselves: never through a link, never over something, owner-only
	 * (a backup holds everything the database does). */
	/* sqlite writes a -journal beside the copy, by a name fixed in advance: no other user may
	 * write in that directory (files.h). */
	struct xp_err derr = {{0}};
	char *dir = xp_dir_of(file);
	int drc = xp_shared_dir_check(dir, false, true, &derr);
	free(dir);
	if (drc < 0) {
		xp_ctx_error(ctx, "db backup: %s", derr.msg);
		return XP_EXIT_ERROR;
	}
	int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		xp_ctx_error(ctx, "db backup: %s: %s", file, errno == EEXIST ? "exists; give a new file" : strerror(errno));
		return XP_EXIT_ERROR;
	}
	fchmod(fd, 0600); /* the umask only takes bits off 0600; exact all the same */
	close(fd);
	sqlite3 *dst;
	if (sqlite3_open_v2(file, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK) {
		xp_ctx_error(ctx, "db backup: %s: %s", file, dst ? sqlite3_errmsg(dst) : "cannot create");
		sqlite3_close(dst);
		return XP_EXIT_ERROR;
	}
	/* The online backup API: a consistent copy while others keep writing. */
	sqlite3_backup *b = sqlite3_backup_init(dst, "main", s->db, "main");
	int rc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
	if (b)
		sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		xp_ctx_error(ctx, "db backup: %s: %s", file, sqlite3_errmsg(dst));
		sqlite3_close(dst);
		remove(file);
		return XP_EXIT_ERROR;
	}
	sqlite3_close(dst);
	fprintf(ctx->out, "backed up %s to %s\n", s->path, file);
	return XP_EXIT_OK;
}

static int db_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	const char *sub = a->argv[0];
	bool info = strcmp(sub, "info") == 0, check = strcmp(sub, "check") == 0;
	bool backup = strcmp(sub, "backup") == 0, vacuum = strcmp(sub, "vacuum") == 0;
	bool snapshot = strcmp(sub, "snapshot") == 0, set = strcmp(sub, "set") == 0;
	if (!info && !check && !backup && !vacuum && !snapshot && !set) {
		xp_ctx_error(ctx, "db: unknown subcommand %s (info, check, backup FILE, vacuum, snapshot, set KEY VALUE)",
			     sub);
		return XP_EXIT_USAGE;
	}
	if ((backup && a->argc != 2) || (set && a->argc != 3) || (!backup && !set && a->argc != 1)) {
		xp_ctx_error(ctx, "db: usage: xpool db info|check|backup FILE|vacuum|snapshot|set KEY VALUE");
		return XP_EXIT_USAGE;
	}
	if (set) {
		/* Settings are few and known: a typo must not become a setting nobody reads. */
		char *end;
		long days = strtol(a->argv[2], &end, 10);
		if (strcmp(a->argv[1], "retention_days") != 0) {
			xp_ctx_error(ctx, "db set: unknown setting %s (retention_days)", a->argv[1]);
			return XP_EXIT_USAGE;
		}
		if (*end || end == a->argv[2] || days < 0 || days > 36500) {
			xp_ctx_error(ctx, "db set: retention_days %s: a number of days from 0 to 36500", a->argv[2]);
			return XP_EXIT_USAGE;
		}
	}
	struct xp_cluster *c = NULL;
	if (snapshot && !(c = xp_ctx_cluster(ctx)))
		return XP_EXIT_ERROR;
	struct xp_err err = {{0}};
	/* info and check look at any file as it is; backup needs our schema and only reads (so it
	 * works on a database the user may only read); the rest write. */
	struct xp_store *s = info || check ? xp_store_open_existing(ctx->db, &err)
			     : backup	   ? xp_store_open_read(ctx->db, &err)
					   : xp_store_open(ctx->db, &err);
	if (!s) {
		xp_ctx_error(ctx, "db %s: %s", sub, err.msg);
		return XP_EXIT_ERROR;
	}
	int rc;
	if (info)
		rc = db_info(ctx, s);
	else if (check)
		rc = db_check(ctx, s);
	else if (backup)
		rc = db_backup(ctx, s, a->argv[1]);
	else if (set) {
		rc = xp_store_set_setting(s, a->argv[1], a->argv[2], &err) < 0 ? XP_EXIT_ERROR : XP_EXIT_OK;
		if (rc)
			xp_ctx_error(ctx, "db set: %s", err.msg);
		else
			fprintf(ctx->out, "%s = %s\n", a->argv[1], a->argv[2]);
	} else if (snapshot) {
		/* For cron: the inventory and one metric sample per device, old ones dropped. */
		rc = xp_store_snapshot(s, c, time(NULL), &err) < 0 ? XP_EXIT_ERROR : XP_EXIT_OK;
		if (rc)
			xp_ctx_error(ctx, "db snapshot: %s", err.msg);
		else
			fprintf(ctx->out, "saved %zu node%s and %zu device sample%s\n", c->n_nodes,
				c->n_nodes == 1 ? "" : "s", xp_cluster_device_count(c),
				xp_cluster_device_count(c) == 1 ? "" : "s");
	} else {
		/* Refused like every write: the file, the write, and why (read-only here, damaged). */
		rc = sqlite3_exec(s->db, "VACUUM", NULL, NULL, NULL) == SQLITE_OK ? XP_EXIT_OK : XP_EXIT_ERROR;
		if (rc) {
			xp_store_fail(s, &err, "vacuuming");
			xp_ctx_error(ctx, "db vacuum: %s", err.msg);
		} else
			fprintf(ctx->out, "%s: vacuumed\n", s->path);
	}
	xp_store_close(s);
	return rc;
}

static const struct xp_subcmd db_subs[] = {
	{"info", true}, {"check", false}, {"backup", false}, {"vacuum", false}, {"snapshot", false}, {"set", false},
	{NULL, false},
};
const struct xp_cmd_entry xp_cmd_db_entry = {
	.name = "db",
	.alias = NULL,
	.usage = "info [--json]|check|backup FILE|vacuum|snapshot|set KEY VALUE",
	.summary = "the database: contents, integrity check, online backup, vacuum, inventory snapshot",
	.opts = NULL,
	.min_args = 1,
	.max_args = 3,
	.exec = db_exec,
	.subs = db_subs,
};
