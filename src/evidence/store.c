/* store.c: opening, migrating and writing the sqlite database; the audit log,
 * baselines, snapshots and samples. */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "model_json.h"
#include "normalize.h"

/* Each migration takes the schema from version i to i + 1; never edit one that has
 * shipped: add the next. */
static const char *const migrations[XP_STORE_VERSION] = {
	/* 1: the first schema */
	"CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE snapshots(id INTEGER PRIMARY KEY, time INTEGER NOT NULL, node TEXT NOT NULL,"
	" source TEXT, doc TEXT NOT NULL);"
	"CREATE INDEX snapshots_time ON snapshots(time);"
	"CREATE TABLE samples(id INTEGER PRIMARY KEY, time INTEGER NOT NULL, node TEXT NOT NULL,"
	" device TEXT NOT NULL, utilization REAL, memory_used_mib INTEGER, temperature_c REAL,"
	" power_w REAL, ecc_corrected INTEGER, ecc_uncorrected INTEGER, health TEXT);"
	"CREATE INDEX samples_time ON samples(time);"
	"CREATE TABLE audit(id INTEGER PRIMARY KEY, time INTEGER NOT NULL, actor TEXT NOT NULL,"
	" action TEXT NOT NULL, target TEXT NOT NULL, before TEXT, after TEXT);"
	"CREATE TABLE environments(id TEXT PRIMARY KEY, vendor TEXT NOT NULL, model TEXT NOT NULL,"
	" driver TEXT NOT NULL, firmware TEXT, runtime TEXT, declared INTEGER NOT NULL DEFAULT 0,"
	" first_seen INTEGER, last_seen INTEGER);"
	"CREATE TABLE cases(name TEXT PRIMARY KEY, image TEXT, model TEXT, data TEXT, entry TEXT,"
	" acceptance TEXT, team TEXT, created INTEGER NOT NULL);"
	"CREATE TABLE results(id INTEGER PRIMARY KEY,"
	" env TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,"
	" case_name TEXT NOT NULL REFERENCES cases(name) ON DELETE CASCADE,"
	" layer INTEGER NOT NULL CHECK(layer BETWEEN 0 AND 4),"
	" status TEXT NOT NULL CHECK(status IN ('pass','fail','stale')),"
	" time INTEGER NOT NULL, actor TEXT NOT NULL, note TEXT, log_path TEXT, log_sha256 TEXT,"
	" node TEXT, driver TEXT, firmware TEXT);"
	"CREATE TABLE baselines(id INTEGER PRIMARY KEY, model TEXT NOT NULL, driver TEXT NOT NULL,"
	" benchmark TEXT NOT NULL, coefficient REAL NOT NULL CHECK(coefficient > 0),"
	" actor TEXT NOT NULL, time INTEGER NOT NULL, verified INTEGER NOT NULL DEFAULT 0);",
	/* 2: the matrix reads the latest record per cell layer; the audit log is read by time */
	"CREATE INDEX results_cell ON results(env, case_name, layer, id);"
	"CREATE INDEX audit_time ON audit(time);",
	/* 3: workload queues (src/queue): resource classes (built-ins cpu and mem), queues in a
	 * hierarchy, and their quotas per class and resource in milli-units (1 device = 1000),
	 * NULL for unlimited. Only additions: readers of older files see no queues. */
	"CREATE TABLE rclasses(name TEXT PRIMARY KEY, vendor TEXT, model TEXT, label TEXT,"
	" builtin INTEGER NOT NULL DEFAULT 0, created INTEGER NOT NULL);"
	"INSERT INTO rclasses(name, builtin, created) VALUES('cpu', 1, 0), ('mem', 1, 0);"
	"CREATE TABLE queues(name TEXT PRIMARY KEY,"
	" parent TEXT REFERENCES queues(name) ON DELETE RESTRICT, tenants TEXT,"
	" weight REAL NOT NULL DEFAULT 1 CHECK(weight > 0), priority INTEGER NOT NULL DEFAULT 0,"
	" ordering TEXT NOT NULL DEFAULT 'best-effort', state TEXT NOT NULL DEFAULT 'open',"
	" reclaimable INTEGER NOT NULL DEFAULT 1, within TEXT NOT NULL DEFAULT 'never',"
	" reclaim TEXT NOT NULL DEFAULT 'never', created INTEGER NOT NULL);"
	"CREATE TABLE quotas(queue TEXT NOT NULL REFERENCES queues(name) ON DELETE CASCADE,"
	" class TEXT NOT NULL REFERENCES rclasses(name) ON DELETE RESTRICT,"
	" resource TEXT NOT NULL CHECK(resource IN ('devices','ecu','cpus','memory')),"
	" guaranteed INTEGER NOT NULL DEFAULT 0, deserved INTEGER NOT NULL DEFAULT 0, max INTEGER,"
	" borrowing_limit INTEGER, lending_limit INTEGER, PRIMARY KEY(queue, class, resource),"
	" CHECK(guaranteed <= deserved), CHECK(max IS NULL OR deserved <= max));"
	"CREATE INDEX quotas_class ON quotas(class);",
	/* 4: workload jobs (src/queue/jstore.c): each job with its spec (JSON), estimate, state,
	 * pending reason and, while it runs, the device slots it holds (JSON); and every state
	 * change with its reason and who made it (a user, or "scheduler"). A job's queue is a
	 * name, not a foreign key: finished jobs stay as history after their queue is removed
	 * (`queue rm` refuses while unfinished ones remain). Only additions: readers of older
	 * files see no jobs. */
	"CREATE TABLE jobs(id INTEGER PRIMARY KEY, name TEXT, queue TEXT NOT NULL, tenant TEXT,"
	" priority INTEGER NOT NULL DEFAULT 0, spec TEXT NOT NULL, submit INTEGER NOT NULL,"
	" est_s INTEGER NOT NULL CHECK(est_s > 0), state TEXT NOT NULL, reason INTEGER NOT NULL DEFAULT 0,"
	" reason_text TEXT, start INTEGER, end INTEGER, preemptions INTEGER NOT NULL DEFAULT 0, alloc TEXT);"
	"CREATE INDEX jobs_queue_state ON jobs(queue, state, priority, submit);"
	"CREATE TABLE job_events(id INTEGER PRIMARY KEY,"
	" job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE, time INTEGER NOT NULL,"
	" from_state TEXT, to_state TEXT NOT NULL, reason INTEGER NOT NULL DEFAULT 0, detail TEXT,"
	" actor TEXT NOT NULL);"
	"CREATE INDEX job_events_job ON job_events(job, id);",
	/* 5: acknowledged and snoozed health problems (acks.c): one row per problem as it was
	 * when acknowledged (node, what, reason and level), so that the same problem stops
	 * shouting and a changed one shouts again; a snooze ends at `until`. Only an addition:
	 * readers of older files see nothing acknowledged. */
	"CREATE TABLE acks(node TEXT NOT NULL, what TEXT NOT NULL, reason TEXT NOT NULL,"
	" level TEXT NOT NULL, kind TEXT NOT NULL CHECK(kind IN ('ack','snooze')), time INTEGER NOT NULL,"
	" until INTEGER, actor TEXT NOT NULL, note TEXT, PRIMARY KEY(node, what, reason));",
};

/* The message of a failed call whose result code is rc and text msg: a read-only database
 * and a corrupt one say what to do about it. */
static int fail_msg(struct xp_store *s, struct xp_err *err, const char *doing, int rc, const char *msg)
{
	switch (rc & 0xff) {
	case SQLITE_READONLY:
		return xp_errf(err, "%s: %s: %s (%s)", s->path, doing,
			       s->read_only && !s->no_write
				       ? "the database was opened for reading only"
				       : "the database is read-only here: writing needs write access to the file"
					 " and its directory",
			       msg);
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return xp_errf(err, "%s: %s: %s: run `xpool db check`", s->path, doing, msg);
	default:
		return xp_errf(err, "%s: %s: %s", s->path, doing, msg);
	}
}

int xp_store_fail(struct xp_store *s, struct xp_err *err, const char *doing)
{
	if (!s->db)
		return xp_errf(err, "%s: %s: no database", s->path, doing);
	return fail_msg(s, err, doing, sqlite3_extended_errcode(s->db), sqlite3_errmsg(s->db));
}

int xp_store_finish(struct xp_store *s, sqlite3_stmt *st, int rc, struct xp_err *err, const char *doing)
{
	int bad = rc != SQLITE_DONE ? xp_store_fail(s, err, doing) : 0;
	sqlite3_finalize(st);
	return bad;
}

int xp_store_has_table(struct xp_store *s, const char *name, bool *has, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", &st, err,
			  "reading the schema") < 0)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	*has = rc == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
	if (rc == SQLITE_ROW)
		rc = sqlite3_step(st);
	return xp_store_finish(s, st, rc, err, "reading the schema");
}

int xp_store_prep(struct xp_store *s, const char *sql, sqlite3_stmt **st, struct xp_err *err, const char *doing)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return xp_store_fail(s, err, doing);
	}
	return 0;
}

void xp_store_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

char *xp_store_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xp_strdup((const char *)t) : NULL;
}

char *xp_store_default_path(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	if (state && *state)
		return xp_asprintf("%s/xpool/xpool.db", state);
	const char *home = getenv("HOME");
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : "/tmp";
	}
	return xp_asprintf("%s/.local/state/xpool/xpool.db", home);
}

/* Checks (and with make, creates) the directory the database goes in, before sqlite makes any
 * file there: the default one is xpool's own (0700, the user's, no one else may write in it);
 * one named by --db must not let another user plant the -wal, -shm or -journal files sqlite
 * opens by fixed names (sticky or not). A directory the user may not write in is only read. */
static int check_dir(const char *path, bool own, bool make, struct xp_err *err)
{
	char *dir = xp_dir_of(path);
	int rc = 0;
	struct stat st;
	if (own)
		rc = xp_private_dir(dir, make, err);
	else if (stat(dir, &st) < 0 ? make : access(dir, W_OK) == 0)
		rc = xp_shared_dir_check(dir, make, true, err);
	free(dir);
	return rc;
}

/* Takes the group and other bits off one of our own regular files; a link is left alone and
 * a file that is not there is fine. The file is never opened: closing any descriptor of a
 * database file drops every POSIX lock this process holds on it, which is how sqlite's
 * connections (the console's own, open meanwhile) keep other processes off. fchmodat does
 * not follow a link (glibc acts through an O_PATH descriptor, whose close drops no lock). */
static void owner_only(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 077))
		(void)!fchmodat(AT_FDCWD, path, st.st_mode & 0700, AT_SYMLINK_NOFOLLOW);
}

/* Creates a missing database file ourselves, 0600 whatever the umask (sqlite would make it
 * 0644 less the umask, and its -wal and -shm take the file's mode), and brings xpool's own
 * database, made 0644 by older versions, down to 0600, with the side files such a version
 * left (a -wal and -shm stay while any connection is open, or after a crash): they hold the
 * latest writes, so the database's mode alone protects nothing. */
static int private_db_file(const char *path, bool own, struct xp_err *err)
{
	char *dir = xp_dir_of(path);
	bool writable = access(dir, W_OK) == 0;
	free(dir);
	if (!writable)
		return 0; /* sqlite's read-only way says what is wrong, if anything */
	if (xp_private_file(path, err) < 0)
		return -1;
	if (own) {
		static const char *const side[] = {"", "-wal", "-shm", "-journal"};
		for (size_t i = 0; i < sizeof side / sizeof *side; i++) {
			char *p = xp_asprintf("%s%s", path, side[i]);
			owner_only(p);
			free(p);
		}
	}
	return 0;
}

static char *actor_name(void)
{
	const char *a = getenv("XPOOL_ACTOR");
	if (a && *a)
		return xp_strdup(a);
	struct passwd *pw = getpwuid(getuid());
	if (pw && pw->pw_name)
		return xp_strdup(pw->pw_name);
	return xp_asprintf("uid %u", (unsigned)getuid());
}

static int exec_sql(struct xp_store *s, const char *sql, struct xp_err *err, const char *doing)
{
	char *msg = NULL;
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		fail_msg(s, err, doing, rc, msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int user_version(struct xp_store *s, int *v, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "PRAGMA user_version", &st, err, "reading the schema version") < 0)
		return -1;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return xp_store_fail(s, err, "reading the schema version");
	return 0;
}

/* What each migration creates (tables and indexes), in the order of migrations[]: how the
 * tables tell which version a file really has. Keep it in step with migrations[]. */
static const char *const migration_objects[XP_STORE_VERSION][12] = {
	{"settings", "snapshots", "snapshots_time", "samples", "samples_time", "audit", "environments", "cases",
	 "results", "baselines", NULL},
	{"results_cell", "audit_time", NULL},
	{"rclasses", "queues", "quotas", "quotas_class", NULL},
	{"jobs", "jobs_queue_state", "job_events", "job_events_job", NULL},
	{"acks", NULL},
};

/* Sets *has to whether the database has a table or index called name; -1 with err set
 * when the schema cannot be read. */
static int has_object(struct xp_store *s, const char *name, bool *has, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT 1 FROM sqlite_schema WHERE name = ?", &st, err, "reading the schema") < 0)
		return -1;
	xp_store_bind_text(st, 1, name);
	int rc = sqlite3_step(st);
	*has = rc == SQLITE_ROW;
	return xp_store_finish(s, st, rc == SQLITE_ROW ? SQLITE_DONE : rc, err, "reading the schema");
}

/* Who checks the tables against the version, for the message. */
enum schema_use { USE_MIGRATE, USE_READ, USE_CHECK };

/* Sets *n to how many tables and indexes the database holds that no migration creates
 * (sqlite's own aside); -1 with err set when the schema cannot be read. */
static int foreign_objects(struct xp_store *s, long long *n, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'", &st,
			  err, "reading the schema") < 0)
		return -1;
	*n = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		bool ours = false;
		for (int k = 0; k < XP_STORE_VERSION && !ours; k++)
			for (const char *const *o = migration_objects[k]; *o && !ours; o++)
				ours = name && strcmp(name, *o) == 0;
		*n += !ours;
	}
	return xp_store_finish(s, st, rc, err, "reading the schema");
}

/* Checks that the tables are those of version v (the user_version): a version set by hand (or
 * a file from elsewhere) must not get half a migration, nor be read as what it is not. use
 * says who asks: a migration from v, a reader, or `db check`. */
static int check_schema(struct xp_store *s, int v, enum schema_use use, struct xp_err *err)
{
	const char *refusing = use == USE_MIGRATE ? ": refusing to migrate" : use == USE_READ ? ": refusing to read it" : "";
	if (v < 0)
		return xp_errf(err, "%s: schema version %d is not one xpool writes (expected 0, an empty database,"
			       " to %d)%s; was user_version changed by hand? restore a backup",
			       s->path, v, XP_STORE_VERSION, refusing);
	/* The version the tables show: every object of migrations 1..k there and none of the later
	 * ones' (-1: no version looks like this). */
	int shown = 0;
	bool later = false; /* past the first migration not fully there */
	for (int k = 0; k < XP_STORE_VERSION && shown >= 0; k++) {
		int present = 0, total = 0;
		for (const char *const *o = migration_objects[k]; *o; o++) {
			bool h;
			if (has_object(s, *o, &h, err) < 0)
				return -1;
			present += h;
			total++;
		}
		if (!later && present == total)
			shown = k + 1;
		else if (present > 0)
			shown = -1;
		else
			later = true;
	}
	if (v > XP_STORE_VERSION) {
		/* Only `db check` gets here (opening refuses a newer version first): a newer xpool's
		 * tables cannot be judged, but ours alone under a newer number are a mismatch. */
		long long n;
		if (foreign_objects(s, &n, err) < 0)
			return -1;
		if (shown < 0 || n > 0)
			return xp_errf(err, "%s: schema version %d is newer than this xpool understands (%d): its tables"
				       " cannot be checked here; use a newer xpool", s->path, v, XP_STORE_VERSION);
	}
	if (v == 0 && shown == 0) {
		/* Empty, or someone else's database: only an empty one is ours to create tables in. */
		sqlite3_stmt *st;
		if (xp_store_prep(s, "SELECT count(*) FROM sqlite_schema", &st, err, "reading the schema") < 0)
			return -1;
		int rc = sqlite3_step(st);
		long long n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		if (xp_store_finish(s, st, rc == SQLITE_ROW ? SQLITE_DONE : rc, err, "reading the schema") < 0)
			return -1;
		if (n > 0)
			return xp_errf(err, "%s: schema version 0 (empty), but it holds %lld tables or indexes xpool did"
				       " not create: not an xpool database?%s",
				       s->path, n, use == USE_MIGRATE ? " refusing to create tables in it"
						   : use == USE_READ ? " refusing to read it" : "");
		return 0;
	}
	if (shown == v)
		return 0;
	if (shown < 0)
		return xp_errf(err, "%s: its user_version says schema version %d, but its tables match no xpool"
			       " schema version%s (%srestore a backup)",
			       s->path, v, refusing, use == USE_CHECK ? "" : "run `xpool db check`, or ");
	return xp_errf(err, "%s: its user_version says schema version %d, but its tables are those of version %d"
		       " (expected version %d's%s)%s; was user_version changed by hand? set it back to %d or restore"
		       " a backup",
		       s->path, v, shown, v, use == USE_MIGRATE ? " to migrate from" : " tables", refusing, shown);
}

int xp_store_check_schema(struct xp_store *s, struct xp_err *err)
{
	return check_schema(s, s->version, USE_CHECK, err);
}

int xp_store_migrate(struct xp_store *s, int from, int to, struct xp_err *err)
{
	(void)from;
	for (;;) {
		/* One transaction per step, and the version read inside it: two processes opening
		 * a new (or old) database at once must not both apply the same step. */
		if (xp_store_begin(s, err) < 0)
			return -1;
		int v;
		if (user_version(s, &v, err) < 0) {
			xp_store_rollback(s);
			return -1;
		}
		if (v >= to) {
			xp_store_rollback(s);
			return 0;
		}
		if (check_schema(s, v, USE_MIGRATE, err) < 0) {
			xp_store_rollback(s);
			return -1;
		}
		char pragma[64];
		snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", v + 1);
		char doing[64];
		snprintf(doing, sizeof doing, "migrating to schema version %d", v + 1);
		if (exec_sql(s, migrations[v], err, doing) < 0 || exec_sql(s, pragma, err, doing) < 0) {
			xp_store_rollback(s);
			return -1;
		}
		if (xp_store_commit(s, err) < 0)
			return -1;
	}
}

/* Switches to WAL unless the file is in WAL already; another process switching at the
 * same moment makes the pragma return BUSY without waiting, so try again briefly. */
static int use_wal(struct xp_store *s, struct xp_err *err)
{
	for (int attempt = 0;; attempt++) {
		sqlite3_stmt *st;
		if (xp_store_prep(s, "PRAGMA journal_mode = WAL", &st, err, "switching to WAL") < 0)
			return -1;
		int rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc == SQLITE_ROW || rc == SQLITE_DONE)
			return 0;
		if ((rc & 0xff) != SQLITE_BUSY || attempt >= 200)
			return xp_store_fail(s, err, "switching to WAL");
		sqlite3_sleep(10);
	}
}

/* Opens name (a path, or a file: URI with SQLITE_OPEN_URI in flags) as the database at path;
 * when that fails, *rc (if not NULL) gets sqlite's result code. */
static struct xp_store *open_db(const char *path, const char *name, int flags, struct xp_err *err, int *rc)
{
	struct xp_store *s = xp_calloc(1, sizeof *s);
	s->path = xp_strdup(path);
	s->actor = actor_name();
	s->read_only = (flags & SQLITE_OPEN_READONLY) != 0;
	/* NOMUTEX: a connection is only ever used by one thread (the console's refresh thread
	 * opens its own), so sqlite's per-call locking is pure cost. */
	int orc = sqlite3_open_v2(name, &s->db, flags | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc)
		*rc = orc;
	if (orc != SQLITE_OK) {
		xp_errf(err, "%s: %s", path, s->db ? sqlite3_errmsg(s->db) : "cannot open");
		xp_store_close(s);
		return NULL;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, XP_STORE_BUSY_MS);
	/* A file that is not a database says so here rather than halfway through a write. */
	if (exec_sql(s, "PRAGMA foreign_keys = ON", err, "opening") < 0 || user_version(s, &s->version, err) < 0) {
		if (rc)
			*rc = sqlite3_extended_errcode(s->db);
		xp_store_close(s);
		return NULL;
	}
	return s;
}

static struct xp_store *open_ro(const char *path, struct xp_err *err);

/* xp_store_open's way for a file the user may only read: opened for reading, so that its
 * reads work and each write fails saying which write and why; a schema that would need a
 * migration (a write) is refused here. */
static struct xp_store *open_unwritable(const char *path, struct xp_err *err)
{
	struct xp_store *s = open_ro(path, err);
	if (!s)
		return NULL;
	s->no_write = true;
	if (s->version > XP_STORE_VERSION)
		xp_errf(err, "%s: schema version %d is newer than this xpool understands (%d): use a newer xpool",
			s->path, s->version, XP_STORE_VERSION);
	else if (s->version != XP_STORE_VERSION && check_schema(s, s->version, USE_MIGRATE, err) == 0)
		xp_errf(err, "%s: schema version %d needs migrating to %d, a write: the database is read-only here:"
			" writing needs write access to the file and its directory",
			s->path, s->version, XP_STORE_VERSION);
	else if (s->version == XP_STORE_VERSION && check_schema(s, s->version, USE_READ, err) == 0)
		return s;
	xp_store_close(s);
	return NULL;
}

struct xp_store *xp_store_open(const char *path, struct xp_err *err)
{
	char *def = NULL;
	if (!path || !*path)
		path = def = xp_store_default_path();
	bool memory = strcmp(path, ":memory:") == 0;
	if (!memory && (check_dir(path, def != NULL, true, err) < 0 || private_db_file(path, def != NULL, err) < 0)) {
		free(def);
		return NULL;
	}
	int rc = SQLITE_OK;
	struct xp_store *s = open_db(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, err, &rc);
	/* sqlite opens a file it may not write for reading without a word (and a WAL one then
	 * fails its first read): such a file is opened for reading on purpose instead. */
	struct stat st;
	if (!memory && ((s && sqlite3_db_readonly(s->db, "main") == 1) || (!s && (rc & 0xff) == SQLITE_READONLY) ||
			(!s && (rc & 0xff) == SQLITE_CANTOPEN && stat(path, &st) == 0 && access(path, W_OK) < 0))) {
		xp_store_close(s);
		s = open_unwritable(path, err);
		free(def);
		return s;
	}
	free(def);
	if (!s)
		return NULL;
	if (s->version > XP_STORE_VERSION) {
		xp_errf(err, "%s: schema version %d is newer than this xpool understands (%d): use a newer xpool",
			s->path, s->version, XP_STORE_VERSION);
		xp_store_close(s);
		return NULL;
	}
	/* WAL: readers (the console) never block the writer (an agent, a script). */
	if ((!memory && use_wal(s, err) < 0) ||
	    exec_sql(s, "PRAGMA synchronous = NORMAL", err, "opening") < 0 ||
	    xp_store_migrate(s, s->version, XP_STORE_VERSION, err) < 0) {
		xp_store_close(s);
		return NULL;
	}
	return s;
}

bool xp_store_missing(const char *path)
{
	char *def = NULL;
	if (!path || !*path)
		path = def = xp_store_default_path();
	struct stat st;
	bool missing = strcmp(path, ":memory:") != 0 && lstat(path, &st) < 0 && errno == ENOENT;
	free(def);
	return missing;
}

/* "file:PATH?immutable=1", PATH percent-encoded where a URI needs it; caller frees. */
static char *immutable_uri(const char *path)
{
	size_t n = strlen(path);
	char *u = xp_malloc(3 * n + 32), *o = u;
	o += sprintf(o, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("/-._~", *p))
			*o++ = (char)*p;
		else
			o += sprintf(o, "%%%02X", *p);
	}
	strcpy(o, "?immutable=1");
	return u;
}

/* The read-only open shared by xp_store_open_read and xp_store_open_existing. */
static struct xp_store *open_ro(const char *path, struct xp_err *err)
{
	struct stat st;
	if (strcmp(path, ":memory:") != 0 && stat(path, &st) < 0)
		return xp_errf(err, "%s: %s", path,
			       errno == ENOENT ? "no database yet (the first command that writes creates it)"
					       : strerror(errno)),
		       NULL;
	int rc = SQLITE_OK;
	struct xp_store *s = open_db(path, path, SQLITE_OPEN_READONLY, err, &rc);
	if (s || strcmp(path, ":memory:") == 0)
		return s;
	/* Only a WAL database that cannot be read as such (its -shm cannot be created or opened:
	 * a directory the user may only read, a read-only mount) is read another way; a busy or
	 * damaged file keeps its error. */
	if ((rc & 0xff) != SQLITE_READONLY && (rc & 0xff) != SQLITE_CANTOPEN)
		return NULL;
	/* Without its -wal file, the file itself holds every committed change: read it alone
	 * (immutable). With one, its changes would be missed: say what would help. */
	char *wal = xp_asprintf("%s-wal", path);
	bool no_wal = lstat(wal, &st) < 0 && errno == ENOENT;
	free(wal);
	if (!no_wal) {
		xp_errf(err, "%s: cannot be read without write access here: its -wal file holds changes not yet"
			" in the database file, and sqlite cannot create or open its -shm file (a user who may"
			" write it must open it once, or copy the three files somewhere writable)", path);
		return NULL;
	}
	struct xp_err e2 = {{0}};
	char *uri = immutable_uri(path);
	s = open_db(path, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, &e2, NULL);
	free(uri);
	return s;
}

struct xp_store *xp_store_open_existing(const char *path, struct xp_err *err)
{
	char *def = NULL;
	if (!path || !*path)
		path = def = xp_store_default_path();
	/* A reader makes files too (a WAL database's -shm): the same directory rules as a writer. */
	if (strcmp(path, ":memory:") != 0 && check_dir(path, def != NULL, false, err) < 0) {
		free(def);
		return NULL;
	}
	struct xp_store *s = open_ro(path, err);
	free(def);
	return s;
}

struct xp_store *xp_store_open_read(const char *path, struct xp_err *err)
{
	struct xp_store *s = xp_store_open_existing(path, err);
	if (!s)
		return NULL;
	if (s->version > XP_STORE_VERSION)
		xp_errf(err, "%s: schema version %d is newer than this xpool understands (%d): use a newer xpool",
			s->path, s->version, XP_STORE_VERSION);
	/* The tables are checked against the version as a migration checks them: a user_version
	 * set by hand is refused, never read as what it is not. */
	else if (strcmp(s->path, ":memory:") != 0 && check_schema(s, s->version, USE_READ, err) < 0)
		;
	else if (s->version == 0 && strcmp(s->path, ":memory:") != 0)
		xp_errf(err, "%s: holds no xpool tables yet (schema version 0): the first command that writes"
			" creates them", s->path);
	else if (s->version < XP_STORE_READ_MIN && strcmp(s->path, ":memory:") != 0)
		xp_errf(err, "%s: schema version %d: this xpool reads versions %d to %d; a command that writes"
			" (for example `xpool db vacuum`) upgrades it", s->path, s->version, XP_STORE_READ_MIN,
			XP_STORE_VERSION);
	else
		return s;
	xp_store_close(s);
	return NULL;
}

const char *xp_store_damage(const struct xp_store *s)
{
	return s ? s->damage : NULL;
}

/* Remembers the first corruption a read without an error return met (rc: its result code). */
static void note_damage(struct xp_store *s, int rc, const char *doing)
{
	if (s->damage || ((rc & 0xff) != SQLITE_CORRUPT && (rc & 0xff) != SQLITE_NOTADB))
		return;
	struct xp_err e = {{0}};
	fail_msg(s, &e, doing, rc, sqlite3_errmsg(s->db));
	s->damage = xp_strdup(e.msg);
}

void xp_store_close(struct xp_store *s)
{
	if (!s)
		return;
	free(s->damage);
	if (s->db)
		sqlite3_close_v2(s->db);
	free(s->path);
	free(s->actor);
	free(s);
}

int xp_store_begin(struct xp_store *s, struct xp_err *err)
{
	/* A read-only store takes no write lock up front: the write the transaction holds is the
	 * statement that fails, with its own words ("writing a setting"). */
	return exec_sql(s, s->read_only ? "BEGIN" : "BEGIN IMMEDIATE", err, "starting a transaction");
}

int xp_store_commit(struct xp_store *s, struct xp_err *err)
{
	if (exec_sql(s, "COMMIT", err, "committing") < 0) {
		xp_store_rollback(s);
		return -1;
	}
	return 0;
}

void xp_store_rollback(struct xp_store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int xp_audit_add(struct xp_store *s, const char *action, const char *target, const char *before,
		 const char *after, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "INSERT INTO audit(time, actor, action, target, before, after) VALUES(?,?,?,?,?,?)", &st,
			  err, "writing the audit log") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)time(NULL));
	xp_store_bind_text(st, 2, s->actor);
	xp_store_bind_text(st, 3, action);
	xp_store_bind_text(st, 4, target);
	xp_store_bind_text(st, 5, before);
	xp_store_bind_text(st, 6, after);
	return xp_store_finish(s, st, sqlite3_step(st), err, "writing the audit log");
}

static int audit_query(struct xp_store *s, const char *sql, sqlite3_int64 arg, size_t limit, struct xp_audit **rows,
		       size_t *n, struct xp_err *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st;
	if (xp_store_prep(s, sql, &st, err, "reading the audit log") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, arg);
	sqlite3_bind_int64(st, 2, limit ? (sqlite3_int64)limit : -1);
	int rc;
	size_t cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(rows, sizeof **rows, *n, &cap);
		struct xp_audit *a = &(*rows)[(*n)++];
		a->id = sqlite3_column_int64(st, 0);
		a->time = (time_t)sqlite3_column_int64(st, 1);
		a->actor = xp_store_col_text(st, 2);
		a->action = xp_store_col_text(st, 3);
		a->target = xp_store_col_text(st, 4);
		a->before = xp_store_col_text(st, 5);
		a->after = xp_store_col_text(st, 6);
	}
	if (xp_store_finish(s, st, rc, err, "reading the audit log") < 0) {
		xp_audit_free(*rows, *n);
		*rows = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int xp_audit_list(struct xp_store *s, time_t since, size_t limit, struct xp_audit **rows, size_t *n,
		  struct xp_err *err)
{
	return audit_query(s,
			   "SELECT id, time, actor, action, target, before, after FROM audit"
			   " WHERE time >= ? ORDER BY id LIMIT ?",
			   (sqlite3_int64)since, limit, rows, n, err);
}

int xp_audit_list_after(struct xp_store *s, int64_t after_id, size_t limit, struct xp_audit **rows, size_t *n,
			struct xp_err *err)
{
	return audit_query(s,
			   "SELECT id, time, actor, action, target, before, after FROM audit"
			   " WHERE id > ? ORDER BY id LIMIT ?",
			   (sqlite3_int64)after_id, limit, rows, n, err);
}

int64_t xp_audit_last_id(struct xp_store *s)
{
	sqlite3_stmt *st;
	int64_t id = 0;
	int rc = sqlite3_prepare_v2(s->db, "SELECT max(id) FROM audit", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			id = sqlite3_column_int64(st, 0);
		else
			rc = sqlite3_extended_errcode(s->db);
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_OK && rc != SQLITE_ROW)
		note_damage(s, rc, "reading the audit log");
	return id;
}

void xp_audit_free(struct xp_audit *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rows[i].actor);
		free(rows[i].action);
		free(rows[i].target);
		free(rows[i].before);
		free(rows[i].after);
	}
	free(rows);
}

static char *baseline_json(const struct xp_baseline *b)
{
	json_t *o = json_object();
	json_object_set_new(o, "model", xp_json_str(b->model));
	json_object_set_new(o, "driver", xp_json_str(b->driver));
	json_object_set_new(o, "benchmark", xp_json_str(b->benchmark));
	json_object_set_new(o, "coefficient", json_real(b->coefficient));
	json_object_set_new(o, "verified", json_boolean(b->verified));
	char *t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return t;
}

int xp_baseline_add(struct xp_store *s, const struct xp_baseline *b, struct xp_err *err)
{
	if (!b->model || !*b->model || !b->driver || !*b->driver || !b->benchmark || !*b->benchmark)
		return xp_errf(err, "a baseline needs a model, a driver and a benchmark");
	if (!(b->coefficient > 0) || !isfinite(b->coefficient))
		return xp_errf(err, "coefficient %g: must be a positive number", b->coefficient);
	if (xp_store_begin(s, err) < 0)
		return -1;
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "INSERT INTO baselines(model, driver, benchmark, coefficient, actor, time, verified)"
			  " VALUES(?,?,?,?,?,?,?)",
			  &st, err, "recording a baseline") < 0) {
		xp_store_rollback(s);
		return -1;
	}
	xp_store_bind_text(st, 1, b->model);
	xp_store_bind_text(st, 2, b->driver);
	xp_store_bind_text(st, 3, b->benchmark);
	sqlite3_bind_double(st, 4, b->coefficient);
	xp_store_bind_text(st, 5, s->actor);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)time(NULL));
	sqlite3_bind_int(st, 7, b->verified);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	char *after = baseline_json(b);
	char target[256];
	snprintf(target, sizeof target, "baseline %s / %s", b->model, b->driver);
	if (rc != SQLITE_DONE) {
		free(after);
		xp_store_fail(s, err, "recording a baseline");
		xp_store_rollback(s);
		return -1;
	}
	int a = xp_audit_add(s, "baseline.add", target, NULL, after, err);
	free(after);
	if (a < 0) {
		xp_store_rollback(s);
		return -1;
	}
	return xp_store_commit(s, err);
}

double xp_baseline_coefficient(struct xp_store *s, const char *model, const char *driver)
{
	if (!model || !driver)
		return NAN;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db,
				    "SELECT coefficient FROM baselines WHERE model = ? AND driver = ?"
				    " ORDER BY verified DESC, time DESC, id DESC LIMIT 1",
				    -1, &st, NULL);
	if (rc != SQLITE_OK) {
		note_damage(s, rc, "reading baselines");
		return NAN;
	}
	xp_store_bind_text(st, 1, model);
	xp_store_bind_text(st, 2, driver);
	rc = sqlite3_step(st);
	double c = rc == SQLITE_ROW ? sqlite3_column_double(st, 0) : NAN;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		note_damage(s, sqlite3_extended_errcode(s->db), "reading baselines");
	sqlite3_finalize(st);
	return c;
}

int xp_baseline_list(struct xp_store *s, struct xp_baseline **rows, size_t *n, struct xp_err *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "SELECT id, model, driver, benchmark, coefficient, actor, time, verified"
			  " FROM baselines ORDER BY time DESC, id DESC",
			  &st, err, "reading baselines") < 0)
		return -1;
	int rc;
	size_t cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(rows, sizeof **rows, *n, &cap);
		struct xp_baseline *b = &(*rows)[(*n)++];
		b->id = sqlite3_column_int64(st, 0);
		b->model = xp_store_col_text(st, 1);
		b->driver = xp_store_col_text(st, 2);
		b->benchmark = xp_store_col_text(st, 3);
		b->coefficient = sqlite3_column_double(st, 4);
		b->actor = xp_store_col_text(st, 5);
		b->time = (time_t)sqlite3_column_int64(st, 6);
		b->verified = sqlite3_column_int(st, 7) != 0;
	}
	if (xp_store_finish(s, st, rc, err, "reading baselines") < 0) {
		xp_baseline_free(*rows, *n);
		*rows = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void xp_baseline_free(struct xp_baseline *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rows[i].model);
		free(rows[i].driver);
		free(rows[i].benchmark);
		free(rows[i].actor);
	}
	free(rows);
}

static double baseline_hook(const char *model, const char *driver, void *arg)
{
	return xp_baseline_coefficient(arg, model, driver);
}

void xp_store_use_baselines(struct xp_store *s)
{
	xp_normalize_set_coefficient_hook(s ? baseline_hook : NULL, s);
}

int xp_store_setting(struct xp_store *s, const char *key, char **value, struct xp_err *err)
{
	*value = NULL;
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT value FROM settings WHERE key = ?", &st, err, "reading a setting") < 0)
		return -1;
	xp_store_bind_text(st, 1, key);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*value = xp_store_col_text(st, 0);
		rc = SQLITE_DONE;
	}
	return xp_store_finish(s, st, rc, err, "reading a setting");
}

int xp_store_set_setting(struct xp_store *s, const char *key, const char *value, struct xp_err *err)
{
	if (xp_store_begin(s, err) < 0)
		return -1;
	char *before;
	if (xp_store_setting(s, key, &before, err) < 0) {
		xp_store_rollback(s);
		return -1;
	}
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO settings(key, value) VALUES(?, ?)", -1, &st,
				    NULL);
	if (rc == SQLITE_OK) {
		xp_store_bind_text(st, 1, key);
		xp_store_bind_text(st, 2, value);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		if (rc != SQLITE_OK)
			xp_store_fail(s, err, "writing a setting");
		sqlite3_finalize(st);
	} else
		xp_store_fail(s, err, "writing a setting");
	char target[128];
	snprintf(target, sizeof target, "setting %s", key);
	json_t *b = before ? json_string(before) : NULL, *a = json_string(value);
	char *bt = b ? json_dumps(b, JSON_ENCODE_ANY) : NULL, *at = a ? json_dumps(a, JSON_ENCODE_ANY) : NULL;
	json_decref(b);
	json_decref(a);
	free(before);
	if (rc != SQLITE_OK || xp_audit_add(s, "setting.set", target, bt, at, err) < 0) {
		free(bt);
		free(at);
		xp_store_rollback(s);
		return -1;
	}
	free(bt);
	free(at);
	return xp_store_commit(s, err);
}

static double col_num(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? XP_NA : sqlite3_column_double(st, i);
}

int xp_store_samples(struct xp_store *s, time_t since, int (*fn)(void *arg, const struct xp_sample_row *r),
		     void *arg, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s,
			  "SELECT time, node, device, utilization, memory_used_mib, temperature_c, power_w"
			  " FROM samples WHERE time >= ? ORDER BY time, id",
			  &st, err, "reading metric samples") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)since);
	int rc, stop = 0;
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *node = (const char *)sqlite3_column_text(st, 1);
		const char *dev = (const char *)sqlite3_column_text(st, 2);
		if (!node || !dev)
			continue;
		struct xp_sample_row r = {(time_t)sqlite3_column_int64(st, 0), node, dev, col_num(st, 3), col_num(st, 4),
					  col_num(st, 5), col_num(st, 6)};
		stop = fn(arg, &r);
	}
	if (stop) {
		sqlite3_finalize(st);
		return stop;
	}
	return xp_store_finish(s, st, rc, err, "reading metric samples");
}

/* The retention setting, or the default when unset (or not a number of days); -1 with err
 * set when the settings cannot be read: a damaged table must not silently mean "default". */
static int retention_days(struct xp_store *s, struct xp_err *err)
{
	char *v;
	if (xp_store_setting(s, "retention_days", &v, err) < 0)
		return -1;
	int d = XP_STORE_RETENTION_DAYS;
	if (v) {
		char *end;
		long k = strtol(v, &end, 10);
		if (!*end && k >= 0 && k <= 36500)
			d = (int)k;
		free(v);
	}
	return d;
}

int xp_store_snapshot(struct xp_store *s, const struct xp_cluster *c, time_t now, struct xp_err *err)
{
	if (xp_store_begin(s, err) < 0)
		return -1;
	sqlite3_stmt *snap = NULL, *samp = NULL, *del1 = NULL, *del2 = NULL;
	int ok = sqlite3_prepare_v2(s->db, "INSERT INTO snapshots(time, node, source, doc) VALUES(?,?,?,?)", -1,
				    &snap, NULL) == SQLITE_OK &&
		 sqlite3_prepare_v2(s->db,
				    "INSERT INTO samples(time, node, device, utilization, memory_used_mib,"
				    " temperature_c, power_w, ecc_corrected, ecc_uncorrected, health)"
				    " VALUES(?,?,?,?,?,?,?,?,?,?)",
				    -1, &samp, NULL) == SQLITE_OK &&
		 sqlite3_prepare_v2(s->db, "DELETE FROM snapshots WHERE time < ?", -1, &del1, NULL) == SQLITE_OK &&
		 sqlite3_prepare_v2(s->db, "DELETE FROM samples WHERE time < ?", -1, &del2, NULL) == SQLITE_OK;
	for (size_t i = 0; ok && i < c->n_nodes; i++) {
		const struct xp_node *n = c->nodes[i];
		json_t *j = xp_node_to_json(n);
		char *doc = json_dumps(j, JSON_COMPACT);
		json_decref(j);
		sqlite3_bind_int64(snap, 1, (sqlite3_int64)now);
		xp_store_bind_text(snap, 2, n->name);
		xp_store_bind_text(snap, 3, n->source);
		xp_store_bind_text(snap, 4, doc);
		ok = sqlite3_step(snap) == SQLITE_DONE;
		sqlite3_reset(snap);
		free(doc);
		for (size_t k = 0; ok && k < n->n_devices; k++) {
			const struct xp_device *d = &n->devices[k];
			char idx[32];
			snprintf(idx, sizeof idx, "ACC%d", d->index);
			sqlite3_bind_int64(samp, 1, (sqlite3_int64)now);
			xp_store_bind_text(samp, 2, n->name);
			xp_store_bind_text(samp, 3, d->pci_bus_id ? d->pci_bus_id : idx);
			if (XP_HAS(d->utilization_pct))
				sqlite3_bind_double(samp, 4, d->utilization_pct);
			else
				sqlite3_bind_null(samp, 4);
			if (d->memory_used_mib >= 0)
				sqlite3_bind_int64(samp, 5, d->memory_used_mib);
			else
				sqlite3_bind_null(samp, 5);
			if (XP_HAS(d->temperature_c))
				sqlite3_bind_double(samp, 6, d->temperature_c);
			else
				sqlite3_bind_null(samp, 6);
			if (XP_HAS(d->power_w))
				sqlite3_bind_double(samp, 7, d->power_w);
			else
				sqlite3_bind_null(samp, 7);
			if (d->ecc_corrected >= 0)
				sqlite3_bind_int64(samp, 8, d->ecc_corrected);
			else
				sqlite3_bind_null(samp, 8);
			if (d->ecc_uncorrected >= 0)
				sqlite3_bind_int64(samp, 9, d->ecc_uncorrected);
			else
				sqlite3_bind_null(samp, 9);
			xp_store_bind_text(samp, 10, xp_health_name(d->health));
			ok = sqlite3_step(samp) == SQLITE_DONE;
			sqlite3_reset(samp);
		}
	}
	bool failed = false; /* err already says why */
	if (ok) {
		/* Bounded retention: what is older than the setting goes in the same transaction. */
		int days = retention_days(s, err);
		failed = days < 0;
		ok = !failed;
		sqlite3_int64 cut = (sqlite3_int64)now - (sqlite3_int64)days * 86400;
		sqlite3_bind_int64(del1, 1, cut);
		sqlite3_bind_int64(del2, 1, cut);
		ok = ok && sqlite3_step(del1) == SQLITE_DONE && sqlite3_step(del2) == SQLITE_DONE;
	}
	if (!ok && !failed)
		xp_store_fail(s, err, "saving a snapshot");
	sqlite3_finalize(snap);
	sqlite3_finalize(samp);
	sqlite3_finalize(del1);
	sqlite3_finalize(del2);
	if (!ok) {
		xp_store_rollback(s);
		return -1;
	}
	return xp_store_commit(s, err);
}
