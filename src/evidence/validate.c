/* validate.c: the validation matrix in the store: environments, cases, layered
 * evidence, staleness when a node's driver or firmware changes, the probe runner,
 * import and export.
 *
 * Rules kept here (DESIGN: "Validation matrix"):
 * - The current state of a cell layer is its latest results row (max id); no row is
 *   untested. Rows are never updated or deleted except with their case or
 *   environment: the table is the evidence history.
 * - A pass on layer L needs layers 0..L-1 currently pass; a fail may always be
 *   recorded. Recording on a lower layer does not touch the layers above it: the
 *   matrix shows each layer as recorded, and xp_validate_highest counts only an
 *   unbroken run of passes from the bottom, which is what placement relies on.
 * - Imported records are history from elsewhere: the layer rule is not applied to them.
 * - Every change writes an audit row in the same transaction as the change. */
#include "validate.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model_json.h"
#include "probe.h"
#include "run.h"

/* Bounds on what users and documents may store: long enough for any real value,
 * short enough that listings stay readable. */
#define FIELD_MAX 256          /* vendor, model, driver, firmware, runtime, node, actor */
#define TEXT_MAX 4096          /* notes, acceptance rules, images, paths */
#define ENTRY_MAX_ARGS 256     /* words in a probe command */
#define RESOLVE_SHOW 5         /* candidates named when a prefix is ambiguous */
/* Where probes find programs: as run.c, never the caller's PATH (nothing of our environment leaks). */
#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
/* The actor of rows written by inventory sync. */
#define DISCOVERY "discovery"

static const char *const layer_names[XP_LAYER_COUNT] = {"discovered", "schedulable", "launches", "executes",
							 "accepted"};
static const char *const status_names[XP_V_COUNT] = {"untested", "pass", "fail", "stale"};
static const char status_marks[XP_V_COUNT] = {'.', 'P', 'F', 'S'};

/* The evidence columns, in the order ev_read expects, after the id. */
#define EV_COLS "layer, status, time, actor, note, log_path, log_sha256, node, driver, firmware"

const char *xp_layer_name(int layer)
{
	return layer >= 0 && layer < XP_LAYER_COUNT ? layer_names[layer] : "unknown";
}

int xp_layer_parse(const char *s)
{
	if (!s || !*s)
		return -1;
	/* "2" for launches: the layer's number as the matrix columns count them. */
	if (s[0] >= '0' && s[0] < '0' + XP_LAYER_COUNT && s[1] == '\0')
		return s[0] - '0';
	size_t n = strlen(s);
	int found = -1;
	for (int i = 0; i < XP_LAYER_COUNT; i++) {
		if (strcmp(layer_names[i], s) == 0)
			return i;
		if (strncmp(layer_names[i], s, n) == 0) {
			if (found >= 0)
				return -1;
			found = i;
		}
	}
	return found;
}

const char *xp_vstatus_name(int status)
{
	return status >= 0 && status < XP_V_COUNT ? status_names[status] : "unknown";
}

int xp_vstatus_parse(const char *s)
{
	for (int i = 0; s && i < XP_V_COUNT; i++)
		if (strcmp(status_names[i], s) == 0)
			return i;
	return -1;
}

char xp_vstatus_mark(int status)
{
	return status >= 0 && status < XP_V_COUNT ? status_marks[status] : '?';
}

static bool known(const char *s)
{
	return s && *s;
}

/* NULL for an unknown value, so that "" and NULL store alike. */
static const char *opt(const char *s)
{
	return known(s) ? s : NULL;
}

/* Equality where NULL and "" both mean "not known". */
static bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

char *xp_env_id(const char *vendor, const char *model, const char *driver, const char *firmware,
		const char *runtime)
{
	if (known(firmware) || known(runtime))
		return xp_asprintf("%s:%s:%s:%s:%s", vendor ? vendor : "", model ? model : "", driver ? driver : "",
				   firmware ? firmware : "", runtime ? runtime : "");
	return xp_asprintf("%s:%s:%s", vendor ? vendor : "", model ? model : "", driver ? driver : "");
}

/* ---- small helpers over sqlite and jansson ---- */

static int prep(struct xp_store *s, const char *sql, sqlite3_stmt **st, struct xp_err *err, const char *doing)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return xp_store_fail(s, err, doing);
	}
	return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xp_strdup((const char *)t) : NULL;
}

/* A JSON value as compact text for the audit log; consumes j. */
static char *jdump(json_t *j)
{
	if (!j)
		return NULL;
	char *t = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(j);
	return t;
}

static json_t *jtime(time_t t)
{
	return t > 0 ? json_integer((json_int_t)t) : json_null();
}

/* Checks a user-given text: required or not, at most max bytes, one printable line. */
static int check_text(const char *what, const char *v, size_t max, bool required, struct xp_err *err)
{
	if (!known(v))
		return required ? xp_errf(err, "%s must not be empty", what) : 0;
	if (strlen(v) > max)
		return xp_errf(err, "%s is longer than %zu bytes", what, max);
	/* Evidence is printed to terminals: valid UTF-8 only, no C0 or C1 controls (U+009B is
	 * a CSI to many terminals), no bidirectional overrides that reorder what is shown. */
	const unsigned char *p = (const unsigned char *)v;
	const unsigned char *end = p + strlen(v);
	while (*p) {
		size_t k = xp_utf8_len(p, (size_t)(end - p));
		if (!k)
			return xp_errf(err, "%s is not valid UTF-8", what);
		if (p[0] < 0x20 || p[0] == 0x7f || (k == 2 && p[0] == 0xc2 && p[1] < 0xa0))
			return xp_errf(err, "%s holds a control character", what);
		if (k == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xae || p[2] == 0xab || p[2] == 0xaa ||
							       p[2] == 0xac || p[2] == 0xad))
			return xp_errf(err, "%s holds a bidirectional override", what);
		p += k;
	}
	return 0;
}

/* The fields of an environment id are separated by ':'; a ':' inside one would make two
 * environments share an id. */
static int check_id_field(const char *what, const char *v, bool required, struct xp_err *err)
{
	if (check_text(what, v, FIELD_MAX, required, err) < 0)
		return -1;
	if (v && strchr(v, ':'))
		return xp_errf(err, "%s '%.80s' holds ':', which separates the fields of an environment id", what, v);
	return 0;
}

/* Case names go into log file names, audit targets and command lines: keep them plain. */
static int check_case_name(const char *name, struct xp_err *err)
{
	size_t n = name ? strlen(name) : 0;
	bool ok = n > 0 && n <= XP_CASE_NAME_MAX;
	for (size_t i = 0; ok && i < n; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		ok = alnum || (i > 0 && (c == '.' || c == '_' || c == '-'));
	}
	if (!ok)
		return xp_errf(err, "invalid case name '%.80s': use letters, digits, '.', '_' and '-', starting with a "
			       "letter or digit, at most %d bytes", name ? name : "", XP_CASE_NAME_MAX);
	return 0;
}

/* A change is one transaction; inside a caller's transaction (a bulk loader, a test)
 * it is a savepoint, so that a refused record still leaves the caller's batch whole. */
static int tx_begin(struct xp_store *s, bool *nested, struct xp_err *err)
{
	*nested = !sqlite3_get_autocommit(s->db);
	if (!*nested)
		return xp_store_begin(s, err);
	if (sqlite3_exec(s->db, "SAVEPOINT xp_validate", NULL, NULL, NULL) != SQLITE_OK)
		return xp_store_fail(s, err, "starting a savepoint");
	return 0;
}

static int tx_commit(struct xp_store *s, bool nested, struct xp_err *err)
{
	if (!nested)
		return xp_store_commit(s, err);
	if (sqlite3_exec(s->db, "RELEASE xp_validate", NULL, NULL, NULL) != SQLITE_OK)
		return xp_store_fail(s, err, "releasing a savepoint");
	return 0;
}

static void tx_rollback(struct xp_store *s, bool nested)
{
	if (!nested)
		xp_store_rollback(s);
	else
		sqlite3_exec(s->db, "ROLLBACK TO xp_validate; RELEASE xp_validate", NULL, NULL, NULL);
}

/* ---- environments ---- */

void xp_env_clear(struct xp_env *e)
{
	if (!e)
		return;
	free(e->id);
	free(e->vendor);
	free(e->model);
	free(e->driver);
	free(e->firmware);
	free(e->runtime);
	memset(e, 0, sizeof *e);
}

void xp_env_list_free(struct xp_env *envs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xp_env_clear(&envs[i]);
	free(envs);
}

#define ENV_COLS "id, vendor, model, driver, firmware, runtime, declared, first_seen, last_seen"

static void env_read(sqlite3_stmt *st, struct xp_env *e)
{
	e->id = col_text(st, 0);
	e->vendor = col_text(st, 1);
	e->model = col_text(st, 2);
	e->driver = col_text(st, 3);
	e->firmware = col_text(st, 4);
	e->runtime = col_text(st, 5);
	e->declared = sqlite3_column_int(st, 6) != 0;
	e->first_seen = (time_t)sqlite3_column_int64(st, 7);
	e->last_seen = (time_t)sqlite3_column_int64(st, 8);
}

json_t *xp_env_to_json(const struct xp_env *e)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", xp_json_str(e->id));
	json_object_set_new(o, "vendor", xp_json_str(e->vendor));
	json_object_set_new(o, "model", xp_json_str(e->model));
	json_object_set_new(o, "driver", xp_json_str(e->driver));
	json_object_set_new(o, "firmware", xp_json_str(e->firmware));
	json_object_set_new(o, "runtime", xp_json_str(e->runtime));
	json_object_set_new(o, "declared", json_boolean(e->declared));
	json_object_set_new(o, "first_seen", jtime(e->first_seen));
	json_object_set_new(o, "last_seen", jtime(e->last_seen));
	return o;
}

/* Reads one environment: 1 found, 0 not, -1 error. */
static int env_get(struct xp_store *s, const char *id, struct xp_env *e, struct xp_err *err)
{
	sqlite3_stmt *st;
	memset(e, 0, sizeof *e);
	if (prep(s, "SELECT " ENV_COLS " FROM environments WHERE id = ?", &st, err, "reading an environment") < 0)
		return -1;
	bind_text(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		env_read(st, e);
	else if (rc != SQLITE_DONE)
		xp_store_fail(s, err, "reading an environment");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int xp_validate_env_list(struct xp_store *s, struct xp_env **envs, size_t *n, struct xp_err *err)
{
	*envs = NULL;
	*n = 0;
	sqlite3_stmt *st;
	if (prep(s, "SELECT " ENV_COLS " FROM environments ORDER BY id", &st, err, "listing environments") < 0)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(envs, sizeof **envs, *n, &cap);
		memset(&(*envs)[*n], 0, sizeof **envs);
		env_read(st, &(*envs)[(*n)++]);
	}
	if (rc != SQLITE_DONE) {
		xp_store_fail(s, err, "listing environments");
		sqlite3_finalize(st);
		xp_env_list_free(*envs, *n);
		*envs = NULL;
		*n = 0;
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

int xp_validate_env_declare(struct xp_store *s, const struct xp_env *e, struct xp_err *err)
{
	if (check_id_field("vendor", e->vendor, true, err) < 0 || check_id_field("model", e->model, true, err) < 0 ||
	    check_id_field("driver", e->driver, true, err) < 0 ||
	    check_id_field("firmware", e->firmware, false, err) < 0 ||
	    check_id_field("runtime", e->runtime, false, err) < 0)
		return -1;
	char *id = xp_env_id(e->vendor, e->model, e->driver, e->firmware, e->runtime);
	bool nested;
	if (tx_begin(s, &nested, err) < 0) {
		free(id);
		return -1;
	}
	struct xp_env old;
	int found = env_get(s, id, &old, err);
	int rc = found < 0 ? -1 : 0;
	sqlite3_stmt *st = NULL;
	if (found == 1 && old.declared) {
		rc = 1;
	} else if (found == 1) {
		/* Discovered already: declaring keeps it listed when discovery no longer sees it. */
		if (prep(s, "UPDATE environments SET declared = 1 WHERE id = ?", &st, err, "declaring an environment") < 0)
			rc = -1;
		else {
			bind_text(st, 1, id);
			if (sqlite3_step(st) != SQLITE_DONE)
				rc = xp_store_fail(s, err, "declaring an environment");
		}
		if (rc == 0)
			rc = xp_audit_add(s, "env.declare", id, "{\"declared\":false}", "{\"declared\":true}", err);
	} else if (found == 0) {
		struct xp_env n = {.id = id, .vendor = e->vendor, .model = e->model, .driver = e->driver,
				   .firmware = (char *)opt(e->firmware), .runtime = (char *)opt(e->runtime),
				   .declared = true, .first_seen = time(NULL)};
		if (prep(s, "INSERT INTO environments(" ENV_COLS ") VALUES(?, ?, ?, ?, ?, ?, 1, ?, NULL)", &st, err,
			 "declaring an environment") < 0)
			rc = -1;
		else {
			bind_text(st, 1, n.id);
			bind_text(st, 2, n.vendor);
			bind_text(st, 3, n.model);
			bind_text(st, 4, n.driver);
			bind_text(st, 5, n.firmware);
			bind_text(st, 6, n.runtime);
			sqlite3_bind_int64(st, 7, (sqlite3_int64)n.first_seen);
			if (sqlite3_step(st) != SQLITE_DONE)
				rc = xp_store_fail(s, err, "declaring an environment");
		}
		if (rc == 0) {
			char *after = jdump(xp_env_to_json(&n));
			rc = xp_audit_add(s, "env.declare", id, NULL, after, err);
			free(after);
		}
	}
	sqlite3_finalize(st);
	xp_env_clear(&old);
	free(id);
	if (rc < 0) {
		tx_rollback(s, nested);
		return -1;
	}
	if (tx_commit(s, nested, err) < 0)
		return -1;
	return rc;
}

char *xp_validate_env_resolve(struct xp_store *s, const char *q, struct xp_err *err)
{
	if (!known(q)) {
		xp_errf(err, "no environment given");
		return NULL;
	}
	sqlite3_stmt *st;
	/* Ids that start with q sort together from q on: one index range, no LIKE (whose
	 * wildcards would be read in user text). */
	if (prep(s, "SELECT id FROM environments WHERE id >= ? ORDER BY id", &st, err, "finding an environment") < 0)
		return NULL;
	bind_text(st, 1, q);
	size_t qlen = strlen(q), n = 0;
	char *first = NULL;
	char shown[768] = "";
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 0);
		if (!id || strncmp(id, q, qlen) != 0)
			break;
		if (strcmp(id, q) == 0) {
			/* The whole id: never ambiguous, even when it prefixes a longer one. */
			free(first);
			first = xp_strdup(id);
			n = 1;
			break;
		}
		if (n == 0)
			first = xp_strdup(id);
		if (n < RESOLVE_SHOW) {
			size_t used = strlen(shown);
			snprintf(shown + used, sizeof shown - used, "%s%s", used ? ", " : "", id);
		}
		n++;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		xp_store_fail(s, err, "finding an environment");
		sqlite3_finalize(st);
		free(first);
		return NULL;
	}
	sqlite3_finalize(st);
	if (n == 1)
		return first;
	free(first);
	if (n == 0)
		xp_errf(err, "no environment matches %s", q);
	else if (n > RESOLVE_SHOW)
		xp_errf(err, "environment %s is ambiguous: %s and %zu more", q, shown, n - RESOLVE_SHOW);
	else
		xp_errf(err, "environment %s is ambiguous: %s", q, shown);
	return NULL;
}

/* ---- cases ---- */

void xp_case_clear(struct xp_case *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->image);
	free(c->model);
	free(c->data);
	free(c->acceptance);
	free(c->team);
	for (size_t i = 0; c->entry && c->entry[i]; i++)
		free(c->entry[i]);
	free(c->entry);
	memset(c, 0, sizeof *c);
}

void xp_case_list_free(struct xp_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xp_case_clear(&cases[i]);
	free(cases);
}

static json_t *entry_json(char *const *entry)
{
	if (!entry)
		return json_null();
	json_t *a = json_array();
	for (size_t i = 0; entry[i]; i++)
		json_array_append_new(a, xp_json_str(entry[i]));
	return a;
}

json_t *xp_case_to_json(const struct xp_case *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", xp_json_str(c->name));
	json_object_set_new(o, "image", xp_json_str(c->image));
	json_object_set_new(o, "model", xp_json_str(c->model));
	json_object_set_new(o, "data", xp_json_str(c->data));
	json_object_set_new(o, "entry", entry_json(c->entry));
	json_object_set_new(o, "acceptance", xp_json_str(c->acceptance));
	json_object_set_new(o, "team", xp_json_str(c->team));
	json_object_set_new(o, "created", jtime(c->created));
	return o;
}

/* The stored entry (a JSON array of strings) as an argv; what we wrote always parses,
 * anything else (a hand-edited database) is reported rather than run. */
static int entry_parse(const char *text, const char *name, char ***out, struct xp_err *err)
{
	*out = NULL;
	if (!text)
		return 0;
	json_t *a = json_loads(text, 0, NULL);
	size_t n = json_is_array(a) ? json_array_size(a) : 0;
	bool ok = n > 0 && n <= ENTRY_MAX_ARGS;
	for (size_t i = 0; ok && i < n; i++)
		ok = json_is_string(json_array_get(a, i));
	if (!ok) {
		json_decref(a);
		return xp_errf(err, "case %s: the stored entry is not a list of words", name);
	}
	char **v = xp_calloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = xp_strdup(json_string_value(json_array_get(a, i)));
	json_decref(a);
	*out = v;
	return 0;
}

#define CASE_COLS "name, image, model, data, entry, acceptance, team, created"

static int case_read(sqlite3_stmt *st, struct xp_case *c, struct xp_err *err)
{
	c->name = col_text(st, 0);
	c->image = col_text(st, 1);
	c->model = col_text(st, 2);
	c->data = col_text(st, 3);
	c->acceptance = col_text(st, 5);
	c->team = col_text(st, 6);
	c->created = (time_t)sqlite3_column_int64(st, 7);
	return entry_parse((const char *)sqlite3_column_text(st, 4), c->name, &c->entry, err);
}

/* 1 when the case exists, 0 when not, -1 on error. */
static int case_exists(struct xp_store *s, const char *name, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (prep(s, "SELECT 1 FROM cases WHERE name = ?", &st, err, "reading a case") < 0)
		return -1;
	bind_text(st, 1, name);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		xp_store_fail(s, err, "reading a case");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int xp_validate_case_get(struct xp_store *s, const char *name, struct xp_case *c, struct xp_err *err)
{
	memset(c, 0, sizeof *c);
	sqlite3_stmt *st;
	if (prep(s, "SELECT " CASE_COLS " FROM cases WHERE name = ?", &st, err, "reading a case") < 0)
		return -1;
	bind_text(st, 1, name);
	int rc = sqlite3_step(st), ret = 0;
	if (rc == SQLITE_ROW)
		ret = case_read(st, c, err);
	else if (rc == SQLITE_DONE)
		ret = xp_errf(err, "no case named %s", name);
	else
		ret = xp_store_fail(s, err, "reading a case");
	sqlite3_finalize(st);
	if (ret < 0)
		xp_case_clear(c);
	return ret;
}

int xp_validate_case_list(struct xp_store *s, struct xp_case **cases, size_t *n, struct xp_err *err)
{
	*cases = NULL;
	*n = 0;
	sqlite3_stmt *st;
	if (prep(s, "SELECT " CASE_COLS " FROM cases ORDER BY name", &st, err, "listing cases") < 0)
		return -1;
	size_t cap = 0;
	int rc, bad = 0;
	while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(cases, sizeof **cases, *n, &cap);
		memset(&(*cases)[*n], 0, sizeof **cases);
		bad = case_read(st, &(*cases)[(*n)++], err);
	}
	if (!bad && rc != SQLITE_DONE)
		bad = xp_store_fail(s, err, "listing cases");
	sqlite3_finalize(st);
	if (bad) {
		xp_case_list_free(*cases, *n);
		*cases = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

/* Checks a case's fields before it is stored (add and import share it). */
static int check_case(const struct xp_case *c, struct xp_err *err)
{
	if (check_case_name(c->name, err) < 0 || check_text("image", c->image, TEXT_MAX, false, err) < 0 ||
	    check_text("model", c->model, TEXT_MAX, false, err) < 0 ||
	    check_text("data", c->data, TEXT_MAX, false, err) < 0 ||
	    check_text("acceptance", c->acceptance, TEXT_MAX, false, err) < 0 ||
	    check_text("team", c->team, FIELD_MAX, false, err) < 0)
		return -1;
	if (c->entry) {
		size_t n = 0;
		while (c->entry[n])
			n++;
		if (n == 0 || !*c->entry[0])
			return xp_errf(err, "entry: the command is empty");
		if (n > ENTRY_MAX_ARGS)
			return xp_errf(err, "entry: more than %d words", ENTRY_MAX_ARGS);
		for (size_t i = 0; i < n; i++)
			if (check_text("entry", c->entry[i], TEXT_MAX, false, err) < 0)
				return -1;
	}
	return 0;
}

/* Inserts a checked case; the caller holds the transaction. */
static int case_insert(struct xp_store *s, const struct xp_case *c, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (prep(s, "INSERT INTO cases(" CASE_COLS ") VALUES(?, ?, ?, ?, ?, ?, ?, ?)", &st, err, "adding a case") < 0)
		return -1;
	char *entry = c->entry ? jdump(entry_json(c->entry)) : NULL;
	bind_text(st, 1, c->name);
	bind_text(st, 2, opt(c->image));
	bind_text(st, 3, opt(c->model));
	bind_text(st, 4, opt(c->data));
	bind_text(st, 5, entry);
	bind_text(st, 6, opt(c->acceptance));
	bind_text(st, 7, opt(c->team));
	sqlite3_bind_int64(st, 8, (sqlite3_int64)c->created);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : xp_store_fail(s, err, "adding a case");
	sqlite3_finalize(st);
	free(entry);
	return rc;
}

int xp_validate_case_add(struct xp_store *s, const struct xp_case *c, struct xp_err *err)
{
	if (check_case(c, err) < 0)
		return -1;
	struct xp_case k = *c;
	k.created = c->created > 0 ? c->created : time(NULL);
	bool nested;
	if (tx_begin(s, &nested, err) < 0)
		return -1;
	int ex = case_exists(s, c->name, err);
	int rc = ex < 0 ? -1 : ex ? xp_errf(err, "case %s exists already", c->name) : case_insert(s, &k, err);
	if (rc == 0) {
		char *after = jdump(xp_case_to_json(&k));
		rc = xp_audit_add(s, "case.add", c->name, NULL, after, err);
		free(after);
	}
	if (rc < 0) {
		tx_rollback(s, nested);
		return -1;
	}
	return tx_commit(s, nested, err);
}

/* Runs a statement with one text parameter that changes rows; the count, or -1. */
static int exec1(struct xp_store *s, const char *sql, const char *arg, const char *doing, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (prep(s, sql, &st, err, doing) < 0)
		return -1;
	bind_text(st, 1, arg);
	int rc = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(s->db) : xp_store_fail(s, err, doing);
	sqlite3_finalize(st);
	return rc;
}

int xp_validate_case_rm(struct xp_store *s, const char *name, struct xp_err *err)
{
	bool nested;
	if (tx_begin(s, &nested, err) < 0)
		return -1;
	struct xp_case c;
	int rc = xp_validate_case_get(s, name, &c, err);
	int gone = 0;
	if (rc == 0) {
		/* Explicit rather than left to ON DELETE CASCADE: the count goes into the audit row,
		 * and a connection opened without foreign keys still removes the evidence. */
		gone = exec1(s, "DELETE FROM results WHERE case_name = ?", name, "removing a case's results", err);
		if (gone < 0 || exec1(s, "DELETE FROM cases WHERE name = ?", name, "removing a case", err) < 0)
			rc = -1;
	}
	if (rc == 0) {
		json_t *b = xp_case_to_json(&c);
		json_object_set_new(b, "results", json_integer(gone));
		char *before = jdump(b);
		rc = xp_audit_add(s, "case.rm", name, before, NULL, err);
		free(before);
	}
	xp_case_clear(&c);
	if (rc < 0) {
		tx_rollback(s, nested);
		return -1;
	}
	return tx_commit(s, nested, err);
}

/* ---- evidence ---- */

void xp_evidence_clear(struct xp_evidence *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++) {
		struct xp_evidence *e = &rows[i];
		free(e->actor);
		free(e->note);
		free(e->log_path);
		free(e->log_sha256);
		free(e->node);
		free(e->driver);
		free(e->firmware);
		e->actor = e->note = e->log_path = e->log_sha256 = e->node = e->driver = e->firmware = NULL;
	}
}

void xp_evidence_free(struct xp_evidence *rows, size_t n)
{
	xp_evidence_clear(rows, n);
	free(rows);
}

/* Reads "id, " EV_COLS from a row. */
static void ev_read(sqlite3_stmt *st, struct xp_evidence *e)
{
	e->id = sqlite3_column_int64(st, 0);
	e->layer = sqlite3_column_int(st, 1);
	int status = xp_vstatus_parse((const char *)sqlite3_column_text(st, 2));
	e->status = status < 0 ? XP_V_UNTESTED : status;
	e->time = (time_t)sqlite3_column_int64(st, 3);
	e->actor = col_text(st, 4);
	e->note = col_text(st, 5);
	e->log_path = col_text(st, 6);
	e->log_sha256 = col_text(st, 7);
	e->node = col_text(st, 8);
	e->driver = col_text(st, 9);
	e->firmware = col_text(st, 10);
}

json_t *xp_evidence_to_json(const struct xp_evidence *e, bool full)
{
	json_t *o = json_object();
	if (full)
		json_object_set_new(o, "layer", json_string(xp_layer_name(e->layer)));
	json_object_set_new(o, "status", json_string(xp_vstatus_name(e->status)));
	json_object_set_new(o, "time", jtime(e->time));
	json_object_set_new(o, "actor", xp_json_str(e->actor));
	json_object_set_new(o, "note", xp_json_str(e->note));
	if (full)
		json_object_set_new(o, "log_path", xp_json_str(e->log_path));
	json_object_set_new(o, "log_sha256", xp_json_str(e->log_sha256));
	json_object_set_new(o, "node", xp_json_str(e->node));
	if (full) {
		json_object_set_new(o, "driver", xp_json_str(e->driver));
		json_object_set_new(o, "firmware", xp_json_str(e->firmware));
	}
	return o;
}

/* The latest record of each layer of one cell; layers without one are untested. */
static int cell_read(struct xp_store *s, const char *env, const char *kase, struct xp_evidence ev[XP_LAYER_COUNT],
		     struct xp_err *err)
{
	memset(ev, 0, XP_LAYER_COUNT * sizeof *ev);
	for (int i = 0; i < XP_LAYER_COUNT; i++)
		ev[i].layer = i;
	sqlite3_stmt *st;
	/* max() with bare columns: sqlite takes those from the row holding the maximum. */
	if (prep(s, "SELECT max(id), " EV_COLS " FROM results WHERE env = ?1 AND case_name = ?2 GROUP BY layer", &st,
		 err, "reading a cell") < 0)
		return -1;
	bind_text(st, 1, env);
	bind_text(st, 2, kase);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int l = sqlite3_column_int(st, 1);
		if (l >= 0 && l < XP_LAYER_COUNT)
			ev_read(st, &ev[l]);
	}
	if (rc != SQLITE_DONE) {
		xp_store_fail(s, err, "reading a cell");
		sqlite3_finalize(st);
		xp_evidence_clear(ev, XP_LAYER_COUNT);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

/* The lowest layer under `layer` that is not pass, or -1 when all are. */
static int lower_gap(const struct xp_evidence ev[XP_LAYER_COUNT], int layer)
{
	for (int i = 0; i < layer; i++)
		if (ev[i].status != XP_V_PASS)
			return i;
	return -1;
}

static int64_t result_insert(struct xp_store *s, const char *env, const char *kase, const struct xp_evidence *e,
			     struct xp_err *err)
{
	sqlite3_stmt *st;
	if (prep(s,
		 "INSERT INTO results(env, case_name, " EV_COLS ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		 &st, err, "recording a result") < 0)
		return -1;
	bind_text(st, 1, env);
	bind_text(st, 2, kase);
	sqlite3_bind_int(st, 3, e->layer);
	bind_text(st, 4, xp_vstatus_name(e->status));
	sqlite3_bind_int64(st, 5, (sqlite3_int64)e->time);
	bind_text(st, 6, e->actor);
	bind_text(st, 7, opt(e->note));
	bind_text(st, 8, opt(e->log_path));
	bind_text(st, 9, opt(e->log_sha256));
	bind_text(st, 10, opt(e->node));
	bind_text(st, 11, opt(e->driver));
	bind_text(st, 12, opt(e->firmware));
	int64_t id = sqlite3_step(st) == SQLITE_DONE ? sqlite3_last_insert_rowid(s->db)
						     : xp_store_fail(s, err, "recording a result");
	sqlite3_finalize(st);
	return id;
}

static char *cell_target(const char *env, const char *kase, int layer)
{
	return xp_asprintf("%s/%s/%s", env, kase, xp_layer_name(layer));
}

/* Records one layer inside the caller's transaction: the checks that need the
 * database, the row, the audit entry. */
static int record_in(struct xp_store *s, const char *env, const char *kase, struct xp_evidence *e,
		     struct xp_err *err)
{
	int ex = case_exists(s, kase, err);
	if (ex <= 0)
		return ex < 0 ? -1 : xp_errf(err, "no case named %s", kase);
	struct xp_env en;
	int found = env_get(s, env, &en, err);
	if (found <= 0)
		return found < 0 ? -1 : xp_errf(err, "no environment matches %s", env);
	struct xp_evidence cur[XP_LAYER_COUNT];
	if (cell_read(s, env, kase, cur, err) < 0) {
		xp_env_clear(&en);
		return -1;
	}
	int rc = 0, gap = e->status == XP_V_PASS ? lower_gap(cur, e->layer) : -1;
	if (gap >= 0)
		rc = xp_errf(err, "cannot record %s pass: %s is %s", xp_layer_name(e->layer), xp_layer_name(gap),
			     xp_vstatus_name(cur[gap].status));
	/* The evidence is for the environment as it is now: staleness compares against this. */
	e->driver = en.driver;
	e->firmware = en.firmware;
	if (rc == 0 && result_insert(s, env, kase, e, err) < 0)
		rc = -1;
	if (rc == 0) {
		struct xp_evidence *prev = &cur[e->layer];
		char *before = prev->status != XP_V_UNTESTED ? jdump(xp_evidence_to_json(prev, true)) : NULL;
		char *after = jdump(xp_evidence_to_json(e, true));
		char *target = cell_target(env, kase, e->layer);
		rc = xp_audit_add(s, "validate.record", target, before, after, err);
		free(before);
		free(after);
		free(target);
	}
	e->driver = e->firmware = NULL;
	xp_evidence_clear(cur, XP_LAYER_COUNT);
	xp_env_clear(&en);
	return rc;
}

int xp_validate_record(struct xp_store *s, const char *env, const char *kase, int layer, int status,
		       const char *note, const char *log_path, const char *node, struct xp_err *err)
{
	if (layer < 0 || layer >= XP_LAYER_COUNT)
		return xp_errf(err, "unknown layer %d", layer);
	if (status != XP_V_PASS && status != XP_V_FAIL)
		return xp_errf(err, "a record is pass or fail, not %s", xp_vstatus_name(status));
	if (check_text("note", note, TEXT_MAX, false, err) < 0 || check_text("node", node, FIELD_MAX, false, err) < 0)
		return -1;
	char hex[65];
	char *abs = NULL;
	if (log_path) {
		/* The log first: a record whose evidence cannot be read is not written at all. A pipe
		 * or a device would hash once and never again: the digest must be checkable later. */
		struct stat st;
		if (stat(log_path, &st) == 0 && !S_ISREG(st.st_mode))
			return xp_errf(err, "log file: %s: not a regular file", log_path);
		if (xp_sha256_file(log_path, hex, err) < 0) {
			xp_err_prefix(err, "log file");
			return -1;
		}
		abs = realpath(log_path, NULL);
		if (!abs)
			return xp_errf(err, "log file: %s: %s", log_path, strerror(errno));
		if (check_text("log path", abs, TEXT_MAX, true, err) < 0) {
			free(abs);
			return -1;
		}
	}
	char *id = xp_validate_env_resolve(s, env, err);
	if (!id) {
		free(abs);
		return -1;
	}
	struct xp_evidence e = {.layer = layer, .status = status, .time = time(NULL), .actor = s->actor,
				.note = (char *)note, .log_path = abs, .log_sha256 = abs ? hex : NULL,
				.node = (char *)node};
	bool nested;
	int rc = tx_begin(s, &nested, err);
	if (rc == 0) {
		rc = record_in(s, id, kase, &e, err);
		if (rc < 0)
			tx_rollback(s, nested);
		else
			rc = tx_commit(s, nested, err);
	}
	free(id);
	free(abs);
	return rc;
}

int xp_validate_cell(struct xp_store *s, const char *env, const char *kase,
		     struct xp_evidence layers[XP_LAYER_COUNT], struct xp_err *err)
{
	memset(layers, 0, XP_LAYER_COUNT * sizeof *layers);
	char *id = xp_validate_env_resolve(s, env, err);
	if (!id)
		return -1;
	int ex = case_exists(s, kase, err);
	int rc = ex < 0 ? -1 : ex == 0 ? xp_errf(err, "no case named %s", kase) : cell_read(s, id, kase, layers, err);
	free(id);
	return rc;
}

int xp_validate_history(struct xp_store *s, const char *env, const char *kase, struct xp_evidence **rows,
			size_t *n, struct xp_err *err)
{
	*rows = NULL;
	*n = 0;
	char *id = xp_validate_env_resolve(s, env, err);
	if (!id)
		return -1;
	int ex = case_exists(s, kase, err);
	if (ex <= 0) {
		free(id);
		return ex < 0 ? -1 : xp_errf(err, "no case named %s", kase);
	}
	sqlite3_stmt *st;
	if (prep(s, "SELECT id, " EV_COLS " FROM results WHERE env = ? AND case_name = ? ORDER BY id", &st, err,
		 "reading a cell's history") < 0) {
		free(id);
		return -1;
	}
	bind_text(st, 1, id);
	bind_text(st, 2, kase);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		xp_grow(rows, sizeof **rows, *n, &cap);
		memset(&(*rows)[*n], 0, sizeof **rows);
		ev_read(st, &(*rows)[(*n)++]);
	}
	free(id);
	if (rc != SQLITE_DONE) {
		xp_store_fail(s, err, "reading a cell's history");
		sqlite3_finalize(st);
		xp_evidence_free(*rows, *n);
		*rows = NULL;
		*n = 0;
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

int xp_validate_highest(struct xp_store *s, const char *env, const char *kase)
{
	sqlite3_stmt *st;
	struct xp_err err;
	if (!env || prep(s,
			 "SELECT case_name, layer, max(id), status FROM results WHERE env = ?1 AND (?2 IS NULL OR "
			 "case_name = ?2) GROUP BY case_name, layer ORDER BY case_name, layer",
			 &st, &err, "reading the matrix") < 0)
		return -1;
	bind_text(st, 1, env);
	bind_text(st, 2, kase);
	int best = -1;
	char *cur = NULL;
	bool pass[XP_LAYER_COUNT] = {false};
	/* Rows come grouped by case: score each case when the next one starts. */
	for (;;) {
		int rc = sqlite3_step(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			/* Placement must not trust a half-read answer. */
			best = -1;
			break;
		}
		const char *name = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
		if (cur && (!name || strcmp(name, cur) != 0)) {
			int h = -1;
			while (h + 1 < XP_LAYER_COUNT && pass[h + 1])
				h++;
			if (h > best)
				best = h;
			free(cur);
			cur = NULL;
		}
		if (!name)
			break;
		if (!cur) {
			cur = xp_strdup(name);
			memset(pass, 0, sizeof pass);
		}
		int l = sqlite3_column_int(st, 1);
		const char *status = (const char *)sqlite3_column_text(st, 3);
		if (l >= 0 && l < XP_LAYER_COUNT)
			pass[l] = status && strcmp(status, "pass") == 0;
	}
	free(cur);
	sqlite3_finalize(st);
	return best;
}

/* ---- sync with inventory ---- */

/* An unreachable or down node shows what it had, not what it has: it proves nothing new. */
static bool node_live(const struct xp_node *n)
{
	return n->state != XP_NODE_UNREACHABLE && n->state != XP_NODE_DOWN;
}

static bool dev_known(const struct xp_device *d)
{
	/* A ':' in a field would make the id ambiguous (see check_id_field): such a device
	 * gets no environment rather than someone else's. */
	return known(d->vendor) && known(d->model) && known(d->driver) && !strchr(d->vendor, ':') &&
	       !strchr(d->model, ':') && !strchr(d->driver, ':') && !(d->firmware && strchr(d->firmware, ':')) &&
	       !(d->runtime && strchr(d->runtime, ':'));
}

/* An environment the inventory shows, with the first live node and device showing it:
 * eight identical accelerators on a hundred nodes are one environment, written once. */
struct shown {
	char *id;
	size_t seq; /* discovery order, so that "first" is the first node listed */
	const struct xp_node *node;
	const struct xp_device *dev;
};

static int shown_cmp(const void *a, const void *b)
{
	const struct shown *x = a, *y = b;
	int c = strcmp(x->id, y->id);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static struct shown *shown_envs(const struct xp_cluster *c, size_t *n)
{
	struct shown *v = NULL;
	size_t k = 0, cap = 0;
	for (size_t ni = 0; ni < c->n_nodes; ni++) {
		const struct xp_node *nd = c->nodes[ni];
		for (size_t i = 0; node_live(nd) && i < nd->n_devices; i++) {
			const struct xp_device *d = &nd->devices[i];
			if (!dev_known(d))
				continue;
			xp_grow(&v, sizeof *v, k, &cap);
			v[k] = (struct shown){xp_env_id(d->vendor, d->model, d->driver, d->firmware, d->runtime), k, nd, d};
			k++;
		}
	}
	if (k)
		qsort(v, k, sizeof *v, shown_cmp);
	size_t out = 0;
	for (size_t i = 0; i < k; i++) {
		if (out && strcmp(v[out - 1].id, v[i].id) == 0)
			free(v[i].id);
		else
			v[out++] = v[i];
	}
	*n = out;
	return v;
}

static void shown_free(struct shown *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].id);
	free(v);
}

/* Upserts each shown environment; last_seen = now. */
static int sync_envs(struct xp_store *s, const struct shown *v, size_t n, time_t now, struct xp_err *err)
{
	sqlite3_stmt *ins = NULL, *upd = NULL;
	if (prep(s, "INSERT OR IGNORE INTO environments(" ENV_COLS ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, ?7)",
		 &ins, err, "recording an environment") < 0 ||
	    prep(s, "UPDATE environments SET last_seen = ?2 WHERE id = ?1 AND (last_seen IS NULL OR last_seen < ?2)",
		 &upd, err, "recording an environment") < 0) {
		sqlite3_finalize(ins);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct xp_device *d = v[i].dev;
		sqlite3_reset(ins);
		bind_text(ins, 1, v[i].id);
		bind_text(ins, 2, d->vendor);
		bind_text(ins, 3, d->model);
		bind_text(ins, 4, d->driver);
		bind_text(ins, 5, opt(d->firmware));
		bind_text(ins, 6, opt(d->runtime));
		sqlite3_bind_int64(ins, 7, (sqlite3_int64)now);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			rc = xp_store_fail(s, err, "recording an environment");
			break;
		}
		if (sqlite3_changes(s->db) == 1) {
			/* New environments are audited; sightings of known ones are not (every sync would). */
			struct xp_env e = {.id = v[i].id, .vendor = d->vendor, .model = d->model, .driver = d->driver,
					   .firmware = (char *)opt(d->firmware), .runtime = (char *)opt(d->runtime),
					   .first_seen = now, .last_seen = now};
			json_t *j = xp_env_to_json(&e);
			json_object_set_new(j, "node", xp_json_str(v[i].node->name));
			char *after = jdump(j);
			rc = xp_audit_add(s, "env.discover", v[i].id, NULL, after, err);
			free(after);
		}
		sqlite3_reset(upd);
		bind_text(upd, 1, v[i].id);
		sqlite3_bind_int64(upd, 2, (sqlite3_int64)now);
		if (rc == 0 && sqlite3_step(upd) != SQLITE_DONE)
			rc = xp_store_fail(s, err, "recording an environment");
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(upd);
	return rc;
}

/* When node n has devices of vendor+model but none with driver and firmware, the first
 * of them (what the node has now). NULL when one still matches, or when there is nothing
 * to compare with (no such device, or versions not known): staleness is a version that
 * changed, not a device that went missing. */
static const struct xp_device *changed_device(const struct xp_node *n, const char *vendor, const char *model,
					      const char *driver, const char *firmware)
{
	const struct xp_device *first = NULL;
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		if (!known(d->driver) || !same(d->vendor, vendor) || !same(d->model, model))
			continue;
		if (same(d->driver, driver) && same(d->firmware, firmware))
			return NULL;
		if (!first)
			first = d;
	}
	return first;
}

/* "driver 535.54.03 -> 550.54.14, firmware A -> B on node7" */
static char *change_note(const struct xp_evidence *ev, const struct xp_device *d, const char *node)
{
	char buf[1024] = "";
	size_t used = 0;
	if (!same(ev->driver, d->driver))
		used += (size_t)snprintf(buf, sizeof buf, "driver %s -> %s", known(ev->driver) ? ev->driver : "unknown",
					 d->driver);
	if (!same(ev->firmware, d->firmware) && used < sizeof buf)
		used += (size_t)snprintf(buf + used, sizeof buf - used, "%sfirmware %s -> %s", used ? ", " : "",
					 known(ev->firmware) ? ev->firmware : "unknown",
					 known(d->firmware) ? d->firmware : "unknown");
	if (used < sizeof buf)
		snprintf(buf + used, sizeof buf - used, " on %s", node);
	return xp_strdup(buf);
}

static int node_cmp(const void *a, const void *b)
{
	return strcmp((*(struct xp_node *const *)a)->name, (*(struct xp_node *const *)b)->name);
}

static const struct xp_node *node_find(struct xp_node *const *sorted, size_t n, const char *name)
{
	struct xp_node key = {.name = (char *)name}, *kp = &key;
	struct xp_node *const *f = n ? bsearch(&kp, sorted, n, sizeof *sorted, node_cmp) : NULL;
	return f ? *f : NULL;
}

struct stale {
	char *kase;
	struct xp_evidence was; /* the pass that no longer holds */
	const struct xp_device *now;
};

/* Marks stale the current passes of environment e taken on the nodes in changed (sorted
 * by name): nodes that show e's model with another driver or firmware. */
static int stale_env(struct xp_store *s, const struct xp_env *e, struct xp_node *const *changed, size_t n_changed,
		     time_t now, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (prep(s, "SELECT max(id), " EV_COLS ", case_name FROM results WHERE env = ? GROUP BY case_name, layer", &st,
		 err, "checking for stale results") < 0)
		return -1;
	bind_text(st, 1, e->id);
	/* Collected first and written after: rows added while the scan runs could be seen by it. */
	struct stale *list = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *status = (const char *)sqlite3_column_text(st, 2);
		const char *node = (const char *)sqlite3_column_text(st, 8);
		if (!status || strcmp(status, "pass") != 0 || !node)
			continue;
		const struct xp_node *nd = node_find(changed, n_changed, node);
		const struct xp_device *d = nd ? changed_device(nd, e->vendor, e->model,
								 (const char *)sqlite3_column_text(st, 9),
								 (const char *)sqlite3_column_text(st, 10))
					       : NULL;
		if (!d)
			continue;
		xp_grow(&list, sizeof *list, n, &cap);
		struct stale *x = &list[n++];
		memset(x, 0, sizeof *x);
		ev_read(st, &x->was);
		x->kase = col_text(st, 11);
		x->now = d;
	}
	rc = rc == SQLITE_DONE ? 0 : xp_store_fail(s, err, "checking for stale results");
	sqlite3_finalize(st);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct stale *x = &list[i];
		char *note = change_note(&x->was, x->now, x->was.node);
		struct xp_evidence ev = {.layer = x->was.layer, .status = XP_V_STALE, .time = now, .actor = DISCOVERY,
					 .note = note, .node = x->was.node, .driver = x->now->driver,
					 .firmware = x->now->firmware};
		if (result_insert(s, e->id, x->kase, &ev, err) < 0)
			rc = -1;
		else {
			char *before = jdump(xp_evidence_to_json(&x->was, true));
			char *after = jdump(xp_evidence_to_json(&ev, true));
			char *target = cell_target(e->id, x->kase, ev.layer);
			rc = xp_audit_add(s, "validate.stale", target, before, after, err);
			free(before);
			free(after);
			free(target);
		}
		free(note);
	}
	for (size_t i = 0; i < n; i++) {
		free(list[i].kase);
		xp_evidence_clear(&list[i].was, 1);
	}
	free(list);
	return rc;
}

/* Orders environments by vendor, then model: the ones a device could be. */
static int vm_cmp(const void *a, const void *b)
{
	const struct xp_env *x = *(const struct xp_env *const *)a, *y = *(const struct xp_env *const *)b;
	int c = strcmp(x->vendor, y->vendor);
	return c ? c : strcmp(x->model, y->model);
}

/* An environment and a node that now shows its model with other versions. */
struct pair {
	size_t env;
	const struct xp_node *node;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->env != y->env)
		return (x->env > y->env) - (x->env < y->env);
	return strcmp(x->node->name, y->node->name);
}

/* Marks stale every cell layer whose current pass was taken on a live node that now has
 * a different driver or firmware for that environment's model. An environment's id holds
 * its driver and firmware, and so does its evidence; so the question "did this node
 * change under the evidence" is first asked of the environments (cheap: each node's
 * models against the environments of those models), and only the results of the
 * environments that some node changed under are read. */
static int sync_stale(struct xp_store *s, const struct xp_cluster *c, time_t now, struct xp_err *err)
{
	struct xp_env *envs;
	size_t n_envs;
	if (xp_validate_env_list(s, &envs, &n_envs, err) < 0)
		return -1;
	const struct xp_env **by = xp_calloc(n_envs + 1, sizeof *by);
	for (size_t i = 0; i < n_envs; i++)
		by[i] = &envs[i];
	if (n_envs)
		qsort(by, n_envs, sizeof *by, vm_cmp);
	struct pair *pairs = NULL;
	size_t n_pairs = 0, cap = 0;
	for (size_t ni = 0; ni < c->n_nodes; ni++) {
		const struct xp_node *nd = c->nodes[ni];
		for (size_t i = 0; node_live(nd) && i < nd->n_devices; i++) {
			const struct xp_device *d = &nd->devices[i];
			bool first = dev_known(d);
			for (size_t j = 0; first && j < i; j++)
				first = !dev_known(&nd->devices[j]) || !same(nd->devices[j].vendor, d->vendor) ||
					!same(nd->devices[j].model, d->model);
			if (!first)
				continue;
			/* The first environment of this vendor and model, then each of them. */
			struct xp_env key = {.vendor = d->vendor, .model = d->model};
			const struct xp_env *kp = &key;
			size_t lo = 0, hi = n_envs;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (vm_cmp(&by[mid], &kp) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < n_envs && vm_cmp(&by[lo], &kp) == 0; lo++) {
				const struct xp_env *e = by[lo];
				if (!changed_device(nd, e->vendor, e->model, e->driver, e->firmware))
					continue;
				xp_grow(&pairs, sizeof *pairs, n_pairs, &cap);
				pairs[n_pairs++] = (struct pair){(size_t)(e - envs), nd};
			}
		}
	}
	free(by);
	if (n_pairs)
		qsort(pairs, n_pairs, sizeof *pairs, pair_cmp);
	struct xp_node **changed = xp_calloc(n_pairs + 1, sizeof *changed);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n_pairs;) {
		size_t k = 0, env = pairs[i].env;
		for (; i < n_pairs && pairs[i].env == env; i++)
			changed[k++] = (struct xp_node *)pairs[i].node;
		rc = stale_env(s, &envs[env], changed, k, now, err);
	}
	free(changed);
	free(pairs);
	xp_env_list_free(envs, n_envs);
	return rc;
}

/* Sets the discovered layer pass, for every case, on each shown environment where it is
 * not pass already; the evidence is the first node showing it. */
static int sync_discovered(struct xp_store *s, const struct shown *v, size_t n, time_t now, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (prep(s,
		 "INSERT INTO results(env, case_name, layer, status, time, actor, node, driver, firmware) "
		 "SELECT ?1, c.name, 0, 'pass', ?2, '" DISCOVERY "', ?3, ?4, ?5 FROM cases c WHERE "
		 "coalesce((SELECT r.status FROM results r WHERE r.env = ?1 AND r.case_name = c.name AND r.layer = 0 "
		 "ORDER BY r.id DESC LIMIT 1), '') <> 'pass' ORDER BY c.name",
		 &st, err, "recording discovery") < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct xp_device *d = v[i].dev;
		sqlite3_reset(st);
		bind_text(st, 1, v[i].id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)now);
		bind_text(st, 3, v[i].node->name);
		bind_text(st, 4, d->driver);
		bind_text(st, 5, opt(d->firmware));
		if (sqlite3_step(st) != SQLITE_DONE) {
			rc = xp_store_fail(s, err, "recording discovery");
			break;
		}
		int k = sqlite3_changes(s->db);
		if (k > 0) {
			/* One audit row per environment and sync, not per cell: it says how many. */
			json_t *j = json_object();
			json_object_set_new(j, "layer", json_string("discovered"));
			json_object_set_new(j, "status", json_string("pass"));
			json_object_set_new(j, "node", xp_json_str(v[i].node->name));
			json_object_set_new(j, "driver", xp_json_str(d->driver));
			json_object_set_new(j, "firmware", xp_json_str(opt(d->firmware)));
			json_object_set_new(j, "cases", json_integer(k));
			char *after = jdump(j);
			rc = xp_audit_add(s, "validate.discover", v[i].id, NULL, after, err);
			free(after);
		}
	}
	sqlite3_finalize(st);
	return rc;
}

int xp_validate_sync(struct xp_store *s, const struct xp_cluster *c, time_t now, struct xp_err *err)
{
	size_t n;
	struct shown *v = shown_envs(c, &n);
	bool nested;
	if (tx_begin(s, &nested, err) < 0) {
		shown_free(v, n);
		return -1;
	}
	/* Staleness before discovery: when an environment's evidence node changed but another
	 * node still has it, the discovered layer turns stale and then pass again on the other
	 * node in the same sync, and the history says both. */
	int rc = sync_envs(s, v, n, now, err);
	if (rc == 0)
		rc = sync_stale(s, c, now, err);
	if (rc == 0)
		rc = sync_discovered(s, v, n, now, err);
	shown_free(v, n);
	if (rc < 0) {
		tx_rollback(s, nested);
		return -1;
	}
	return tx_commit(s, nested, err);
}

/* ---- the matrix ---- */

/* The matrix's strings, bump-allocated: 100,000 cells would otherwise be a million
 * small allocations to make and to free. */
struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

#define CHUNK_SIZE 65536

static char *arena_col(struct chunk **a, sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	if (!t)
		return NULL;
	size_t n = strlen((const char *)t); /* not column_bytes: each sqlite call takes the connection's mutex */
	if (!*a || (*a)->cap - (*a)->used < n + 1) {
		size_t cap = n + 1 > CHUNK_SIZE ? n + 1 : CHUNK_SIZE;
		struct chunk *c = xp_malloc(sizeof *c + cap);
		c->next = *a;
		c->used = 0;
		c->cap = cap;
		*a = c;
	}
	char *p = (*a)->data + (*a)->used;
	memcpy(p, t, n);
	p[n] = '\0';
	(*a)->used += n + 1;
	return p;
}

/* A name -> index map over the matrix's sorted envs or cases: open addressing, FNV-1a.
 * Results arrive in id order, not by cell, so each row looks both names up; a binary
 * search of 500 ids sharing a long "vendor:model" prefix costs more than the row. */
struct index_map {
	size_t mask;
	size_t *slot; /* index + 1; 0 is empty */
};

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static void map_init(struct index_map *map, size_t n, const char *(*name)(const void *, size_t), const void *arr)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	map->mask = cap - 1;
	map->slot = xp_calloc(cap, sizeof *map->slot);
	for (size_t i = 0; i < n; i++) {
		const char *k = name(arr, i);
		size_t h = (size_t)fnv(k, strlen(k)) & map->mask;
		while (map->slot[h])
			h = (h + 1) & map->mask;
		map->slot[h] = i + 1;
	}
}

/* The index of key (len bytes), or -1. */
static long map_find(const struct index_map *map, const char *key, size_t len,
		     const char *(*name)(const void *, size_t), const void *arr)
{
	for (size_t h = (size_t)fnv(key, len) & map->mask; map->slot[h]; h = (h + 1) & map->mask) {
		const char *k = name(arr, map->slot[h] - 1);
		if (strncmp(k, key, len) == 0 && k[len] == '\0')
			return (long)(map->slot[h] - 1);
	}
	return -1;
}

static const char *env_name(const void *arr, size_t i)
{
	return ((const struct xp_env *)arr)[i].id;
}

static const char *case_name(const void *arr, size_t i)
{
	return ((const struct xp_case *)arr)[i].name;
}

void xp_matrix_free(struct xp_matrix *m)
{
	if (!m)
		return;
	xp_env_list_free(m->envs, m->n_envs);
	xp_case_list_free(m->cases, m->n_cases);
	free(m->cells);
	for (struct chunk *c = m->arena, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	memset(m, 0, sizeof *m);
}

/* Fills the cells: one scan of results in id order, each row overwriting its cell layer,
 * so that the latest row wins. Measured at 100,000 results this is several times faster
 * than a GROUP BY max(id) over the results_cell index, which fetches every table row
 * at random. The cells carry what the matrix shows (status, time, actor, note, node,
 * log digest); the log path, driver and firmware come with xp_validate_cell and history. */
static int matrix_fill(struct xp_store *s, struct xp_matrix *m, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (prep(s, "SELECT id, layer, status, time, actor, note, log_sha256, node, env, case_name FROM results "
		    "ORDER BY id", &st, err, "reading the matrix") < 0)
		return -1;
	struct index_map envs, cases;
	map_init(&envs, m->n_envs, env_name, m->envs);
	map_init(&cases, m->n_cases, case_name, m->cases);
	struct chunk *arena = NULL;
	long env = -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int l = sqlite3_column_int(st, 1);
		const char *eid = (const char *)sqlite3_column_text(st, 8);
		const char *cname = (const char *)sqlite3_column_text(st, 9);
		if (!eid || !cname || l < 0 || l >= XP_LAYER_COUNT)
			continue;
		size_t elen = strlen(eid), clen = strlen(cname);
		/* Bulk recording goes env by env: the last env is often the next. */
		if (env < 0 || strncmp(m->envs[env].id, eid, elen) != 0 || m->envs[env].id[elen])
			env = map_find(&envs, eid, elen, env_name, m->envs);
		long k = map_find(&cases, cname, clen, case_name, m->cases);
		/* A row of an environment or case added after we listed them: the next read shows it. */
		if (env < 0 || k < 0)
			continue;
		struct xp_evidence *e = &m->cells[(size_t)env * m->n_cases + (size_t)k].layers[l];
		e->id = sqlite3_column_int64(st, 0);
		const char *status = (const char *)sqlite3_column_text(st, 2);
		e->status = !status ? XP_V_UNTESTED : status[0] == 'p' ? XP_V_PASS : status[0] == 'f' ? XP_V_FAIL
			  : status[0] == 's' ? XP_V_STALE : XP_V_UNTESTED;
		e->time = (time_t)sqlite3_column_int64(st, 3);
		/* A superseded row's strings stay in the arena until the matrix is freed: cheaper
		 * than reading each cell's history first to find its latest row. */
		e->actor = arena_col(&arena, st, 4);
		e->note = arena_col(&arena, st, 5);
		e->log_sha256 = arena_col(&arena, st, 6);
		e->node = arena_col(&arena, st, 7);
	}
	m->arena = arena;
	free(envs.slot);
	free(cases.slot);
	if (rc != SQLITE_DONE)
		xp_store_fail(s, err, "reading the matrix");
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The cells array: 100,000 cells are 40 MiB, and faulting that in 4 KiB pages costs
 * more than reading the results. Huge pages where the kernel offers them on request
 * (transparent huge pages in "madvise" mode); plain pages otherwise. */
static struct xp_cell *cells_alloc(size_t n)
{
	size_t bytes = n * sizeof(struct xp_cell), huge = (size_t)2 << 20;
	if (bytes >= 2 * huge) {
		void *p = aligned_alloc(huge, (bytes + huge - 1) / huge * huge);
		if (p) {
			madvise(p, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);
			return p;
		}
	}
	return xp_malloc(bytes);
}

int xp_validate_matrix(struct xp_store *s, struct xp_matrix *m, struct xp_err *err)
{
	memset(m, 0, sizeof *m);
	/* One read transaction: the lists and the cells are one snapshot even while another
	 * process records. Inside a caller's transaction that one already is. */
	bool own = sqlite3_get_autocommit(s->db);
	if (own && sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return xp_store_fail(s, err, "reading the matrix");
	int rc = xp_validate_env_list(s, &m->envs, &m->n_envs, err);
	if (rc == 0)
		rc = xp_validate_case_list(s, &m->cases, &m->n_cases, err);
	if (rc == 0) {
		size_t n = m->n_envs * m->n_cases;
		m->cells = n ? cells_alloc(n) : NULL;
		for (size_t i = 0; i < n; i++) {
			struct xp_cell *c = &m->cells[i];
			memset(c, 0, sizeof *c);
			c->env = i / m->n_cases;
			c->kase = i % m->n_cases;
			for (int l = 0; l < XP_LAYER_COUNT; l++)
				c->layers[l].layer = l;
		}
		rc = matrix_fill(s, m, err);
	}
	if (own)
		sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc < 0)
		xp_matrix_free(m);
	return rc;
}

json_t *xp_matrix_to_json(const struct xp_matrix *m)
{
	json_t *envs = json_array(), *cases = json_array(), *cells = json_array();
	for (size_t i = 0; i < m->n_envs; i++)
		json_array_append_new(envs, xp_env_to_json(&m->envs[i]));
	for (size_t i = 0; i < m->n_cases; i++)
		json_array_append_new(cases, xp_case_to_json(&m->cases[i]));
	for (size_t i = 0; i < m->n_envs * m->n_cases; i++) {
		const struct xp_cell *c = &m->cells[i];
		json_t *o = json_object(), *layers = json_object();
		json_object_set_new(o, "env", xp_json_str(m->envs[c->env].id));
		json_object_set_new(o, "case", xp_json_str(m->cases[c->kase].name));
		for (int l = 0; l < XP_LAYER_COUNT; l++)
			json_object_set_new(layers, xp_layer_name(l), xp_evidence_to_json(&c->layers[l], false));
		json_object_set_new(o, "layers", layers);
		json_array_append_new(cells, o);
	}
	json_t *doc = json_object();
	json_object_set_new(doc, "environments", envs);
	json_object_set_new(doc, "cases", cases);
	json_object_set_new(doc, "cells", cells);
	return doc;
}

/* ---- running a probe ---- */

/* mkdir -p with mode 0700 for what it creates: logs may show what a workload printed. */
static int make_dirs(const char *path, struct xp_err *err)
{
	char *copy = xp_strdup(path);
	int rc = 0;
	for (char *p = copy + 1; rc == 0; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(copy, 0700) < 0 && errno != EEXIST)
			rc = xp_errf(err, "log directory %s: %s", copy, strerror(errno));
		*p = c;
		if (!c)
			break;
	}
	struct stat st;
	if (rc == 0 && (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)))
		rc = xp_errf(err, "log directory %s: not a directory", path);
	free(copy);
	return rc;
}

/* s reduced to what is safe in a file name, at most max bytes. */
static void file_part(char *out, size_t max, const char *s)
{
	size_t o = 0;
	for (; *s && o + 1 < max; s++) {
		char c = *s;
		bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			    c == '-';
		out[o++] = keep ? c : '_';
	}
	out[o] = '\0';
}

/* Creates the log file dir/CASE_ENV_TIME.log (a new file, never through a link), with
 * a counter when one run follows another within the second. */
static int open_log(const char *dir, const char *kase, const char *env, time_t now, char **path, struct xp_err *err)
{
	char c[XP_CASE_NAME_MAX + 1], e[101], when[32];
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
	file_part(c, sizeof c, kase);
	file_part(e, sizeof e, env);
	for (int i = 1; i < 100; i++) {
		char *p = i == 1 ? xp_asprintf("%s/%s_%s_%s.log", dir, c, e, when)
				 : xp_asprintf("%s/%s_%s_%s-%d.log", dir, c, e, when, i);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			*path = p;
			return fd;
		}
		int e2 = errno;
		free(p);
		if (e2 != EEXIST)
			return xp_errf(err, "log file in %s: %s", dir, strerror(e2));
	}
	return xp_errf(err, "log file in %s: too many runs this second", dir);
}

char *xp_validate_default_log_dir(void)
{
	char *db = xp_store_default_path();
	char *slash = strrchr(db, '/');
	if (slash)
		*slash = '\0';
	char *dir = xp_asprintf("%s/logs", slash ? db : ".");
	free(db);
	return dir;
}

int xp_validate_log_write(const char *log_dir, const char *kase, const char *env, const char *text, size_t len,
			  char **path, struct xp_err *err)
{
	*path = NULL;
	if (make_dirs(log_dir, err) < 0)
		return -1;
	int fd = open_log(log_dir, kase, env, time(NULL), path, err);
	if (fd < 0)
		return -1;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = errno;
			close(fd);
			unlink(*path);
			xp_errf(err, "writing the log %s: %s", *path, strerror(e));
			free(*path);
			*path = NULL;
			return -1;
		}
		off += (size_t)w;
	}
	if (close(fd) < 0) {
		xp_errf(err, "writing the log %s: %s", *path, strerror(errno));
		free(*path);
		*path = NULL;
		return -1;
	}
	return 0;
}

int xp_validate_run(struct xp_store *s, const char *kase, const char *env, int layer, const char *node,
		    double timeout_s, const char *log_dir, struct xp_err *err)
{
	if (layer < 0 || layer >= XP_LAYER_COUNT)
		return xp_errf(err, "unknown layer %d", layer);
	if (!(timeout_s > 0))
		return xp_errf(err, "the timeout must be more than 0 seconds");
	if (!known(log_dir))
		return xp_errf(err, "no log directory given");
	if (check_text("node", node, FIELD_MAX, false, err) < 0)
		return -1;
	struct xp_case c;
	if (xp_validate_case_get(s, kase, &c, err) < 0)
		return -1;
	char *id = NULL, *prog = NULL, *path = NULL;
	struct xp_evidence cur[XP_LAYER_COUNT] = {{0}};
	int rc = 0, fd = -1;
	if (!c.entry)
		rc = xp_errf(err, "case %s has no entry command (add the case with --entry)", kase);
	if (rc == 0 && !(id = xp_validate_env_resolve(s, env, err)))
		rc = -1;
	if (rc == 0)
		rc = cell_read(s, id, kase, cur, err);
	/* A pass could not be recorded: say so before the probe runs, not after. */
	int gap = rc == 0 ? lower_gap(cur, layer) : -1;
	if (gap >= 0)
		rc = xp_errf(err, "cannot run %s on %s: %s is %s", kase, xp_layer_name(layer), xp_layer_name(gap),
			     xp_vstatus_name(cur[gap].status));
	if (rc == 0 && !(prog = xp_which(c.entry[0])))
		rc = xp_errf(err, "case %s: %s: program not found", kase, c.entry[0]);
	if (rc == 0 && make_dirs(log_dir, err) < 0)
		rc = -1;
	if (rc == 0 && (fd = open_log(log_dir, kase, id, time(NULL), &path, err)) < 0)
		rc = -1;
	char note[160] = "";
	int ok = 0;
	if (rc == 0) {
		/* A clean environment, as for vendor tools, plus what the probe may want to know. */
		const char *home = getenv("HOME");
		char *envp[9];
		int k = 0;
		envp[k++] = xp_strdup("PATH=" SAFE_PATH);
		envp[k++] = xp_strdup("LANG=C");
		envp[k++] = xp_strdup("LC_ALL=C");
		envp[k++] = xp_asprintf("XPOOL_CASE=%s", kase);
		envp[k++] = xp_asprintf("XPOOL_ENV=%s", id);
		envp[k++] = xp_asprintf("XPOOL_LAYER=%s", xp_layer_name(layer));
		envp[k++] = xp_asprintf("XPOOL_NODE=%s", node ? node : "");
		if (home && *home)
			envp[k++] = xp_asprintf("HOME=%s", home);
		envp[k] = NULL;
		struct xp_probe_result pr;
		ok = xp_probe_run(prog, c.entry, envp, fd, timeout_s, XP_VALIDATE_MAX_LOG, NULL, &pr, err);
		if (ok >= 0)
			xp_probe_note(&pr, timeout_s, XP_VALIDATE_MAX_LOG, note, sizeof note);
		for (int i = 0; i < k; i++)
			free(envp[i]);
		if (close(fd) < 0 && ok >= 0)
			ok = xp_errf(err, "writing the log %s: %s", path, strerror(errno));
		if (ok < 0)
			rc = -1;
	}
	if (rc == 0)
		rc = xp_validate_record(s, id, kase, layer, ok ? XP_V_PASS : XP_V_FAIL, note, path, node, err);
	xp_evidence_clear(cur, XP_LAYER_COUNT);
	xp_case_clear(&c);
	free(id);
	free(prog);
	free(path);
	return rc;
}

/* ---- export and import ---- */

int xp_validate_export(struct xp_store *s, FILE *f, struct xp_err *err)
{
	struct xp_env *envs = NULL;
	struct xp_case *cases = NULL;
	size_t ne = 0, nc = 0;
	bool own = sqlite3_get_autocommit(s->db);
	if (own && sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return xp_store_fail(s, err, "exporting");
	sqlite3_stmt *st = NULL;
	int rc = xp_validate_env_list(s, &envs, &ne, err);
	if (rc == 0)
		rc = xp_validate_case_list(s, &cases, &nc, err);
	if (rc == 0)
		rc = prep(s, "SELECT id, " EV_COLS ", env, case_name FROM results ORDER BY id", &st, err, "exporting");
	json_t *doc = json_object(), *je = json_array(), *jc = json_array(), *jr = json_array();
	json_object_set_new(doc, "schema", json_string(XP_VALIDATE_SCHEMA));
	json_object_set_new(doc, "environments", je);
	json_object_set_new(doc, "cases", jc);
	json_object_set_new(doc, "results", jr);
	for (size_t i = 0; rc == 0 && i < ne; i++)
		json_array_append_new(je, xp_env_to_json(&envs[i]));
	for (size_t i = 0; rc == 0 && i < nc; i++)
		json_array_append_new(jc, xp_case_to_json(&cases[i]));
	int step = SQLITE_DONE;
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct xp_evidence e = {0};
		ev_read(st, &e);
		json_t *o = json_object();
		json_object_set_new(o, "env", xp_json_str((const char *)sqlite3_column_text(st, 11)));
		json_object_set_new(o, "case", xp_json_str((const char *)sqlite3_column_text(st, 12)));
		json_object_set_new(o, "layer", json_string(xp_layer_name(e.layer)));
		json_object_set_new(o, "status", json_string(xp_vstatus_name(e.status)));
		json_object_set_new(o, "time", json_integer((json_int_t)e.time));
		json_object_set_new(o, "actor", xp_json_str(e.actor));
		json_object_set_new(o, "note", xp_json_str(e.note));
		json_object_set_new(o, "log_path", xp_json_str(e.log_path));
		json_object_set_new(o, "log_sha256", xp_json_str(e.log_sha256));
		json_object_set_new(o, "node", xp_json_str(e.node));
		json_object_set_new(o, "driver", xp_json_str(e.driver));
		json_object_set_new(o, "firmware", xp_json_str(e.firmware));
		json_array_append_new(jr, o);
		xp_evidence_clear(&e, 1);
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = xp_store_fail(s, err, "exporting");
	sqlite3_finalize(st);
	if (own)
		sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc == 0) {
		errno = 0;
		if (json_dumpf(doc, f, JSON_INDENT(2)) < 0 || fputc('\n', f) == EOF || fflush(f) == EOF || ferror(f))
			rc = xp_errf(err, "writing the export: %s", errno ? strerror(errno) : "write error");
	}
	json_decref(doc);
	xp_env_list_free(envs, ne);
	xp_case_list_free(cases, nc);
	return rc;
}

/* Reading a document: each getter takes the object, the key and the object's JSON path
 * (for the message); a missing key or null is "not given". */

static int jstring(json_t *o, const char *key, const char *path, size_t max, bool required, const char **out,
		   struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return required ? xp_errf(err, "%s.%s: missing", path, key) : 0;
	if (!json_is_string(v))
		return xp_errf(err, "%s.%s: expected a string", path, key);
	char what[160];
	snprintf(what, sizeof what, "%s.%s", path, key);
	if (check_text(what, json_string_value(v), max, required, err) < 0)
		return -1;
	*out = json_string_value(v);
	return 0;
}

static int jtime_get(json_t *o, const char *key, const char *path, bool required, time_t *out, struct xp_err *err)
{
	json_t *v = json_object_get(o, key);
	*out = 0;
	if (!v || json_is_null(v))
		return required ? xp_errf(err, "%s.%s: missing", path, key) : 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return xp_errf(err, "%s.%s: expected seconds since 1970 (an integer)", path, key);
	/* Evidence from the future is a broken clock or a forged file: a day of skew is allowed. */
	if (json_integer_value(v) > (json_int_t)time(NULL) + 86400)
		return xp_errf(err, "%s.%s: %lld is in the future", path, key, (long long)json_integer_value(v));
	*out = (time_t)json_integer_value(v);
	return 0;
}

static json_t *jarray(json_t *doc, const char *key, struct xp_err *err)
{
	json_t *a = json_object_get(doc, key);
	if (!a || json_is_null(a))
		return json_array();
	if (!json_is_array(a)) {
		xp_errf(err, "$.%s: expected an array", key);
		return NULL;
	}
	return json_incref(a);
}

/* A digest is 64 lower-case hex digits, as xp_sha256_hex writes it. */
static int check_hex(const char *h, const char *path, struct xp_err *err)
{
	if (!h)
		return 0;
	size_t n = strspn(h, "0123456789abcdef");
	if (n != 64 || h[n])
		return xp_errf(err, "%s.log_sha256: expected 64 hex digits", path);
	return 0;
}

/* Imports the environments: new ones are inserted, known ones left as they are. */
static int import_envs(struct xp_store *s, json_t *arr, json_t *seen, int *added, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (prep(s, "INSERT OR IGNORE INTO environments(" ENV_COLS ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)", &st, err,
		 "importing an environment") < 0)
		return -1;
	size_t i;
	json_t *o;
	int rc = 0;
	json_array_foreach(arr, i, o) {
		char path[64];
		snprintf(path, sizeof path, "$.environments[%zu]", i);
		struct xp_env e = {0};
		const char *id;
		json_t *decl;
		if (!json_is_object(o)) {
			rc = xp_errf(err, "%s: expected an object", path);
			break;
		}
		if (jstring(o, "id", path, TEXT_MAX, true, &id, err) < 0 ||
		    jstring(o, "vendor", path, FIELD_MAX, true, (const char **)&e.vendor, err) < 0 ||
		    jstring(o, "model", path, FIELD_MAX, true, (const char **)&e.model, err) < 0 ||
		    jstring(o, "driver", path, FIELD_MAX, true, (const char **)&e.driver, err) < 0 ||
		    jstring(o, "firmware", path, FIELD_MAX, false, (const char **)&e.firmware, err) < 0 ||
		    jstring(o, "runtime", path, FIELD_MAX, false, (const char **)&e.runtime, err) < 0 ||
		    jtime_get(o, "first_seen", path, false, &e.first_seen, err) < 0 ||
		    jtime_get(o, "last_seen", path, false, &e.last_seen, err) < 0) {
			rc = -1;
			break;
		}
		decl = json_object_get(o, "declared");
		if (decl && !json_is_null(decl) && !json_is_boolean(decl)) {
			rc = xp_errf(err, "%s.declared: expected true or false", path);
			break;
		}
		char *want = xp_env_id(e.vendor, e.model, e.driver, e.firmware, e.runtime);
		if (strcmp(want, id) != 0)
			rc = xp_errf(err, "%s.id: %s does not match its fields (%s)", path, id, want);
		free(want);
		json_t *dup = json_object_get(seen, id);
		if (rc == 0 && dup)
			rc = xp_errf(err, "%s.id: %s is listed twice (first at $.environments[%lld])", path, id,
				     (long long)json_integer_value(dup));
		if (rc < 0)
			break;
		json_object_set_new(seen, id, json_integer((json_int_t)i));
		sqlite3_reset(st);
		bind_text(st, 1, id);
		bind_text(st, 2, e.vendor);
		bind_text(st, 3, e.model);
		bind_text(st, 4, e.driver);
		bind_text(st, 5, e.firmware);
		bind_text(st, 6, e.runtime);
		sqlite3_bind_int(st, 7, json_is_true(decl));
		if (e.first_seen)
			sqlite3_bind_int64(st, 8, (sqlite3_int64)e.first_seen);
		else
			sqlite3_bind_null(st, 8);
		if (e.last_seen)
			sqlite3_bind_int64(st, 9, (sqlite3_int64)e.last_seen);
		else
			sqlite3_bind_null(st, 9);
		if (sqlite3_step(st) != SQLITE_DONE) {
			rc = xp_store_fail(s, err, "importing an environment");
			break;
		}
		*added += sqlite3_changes(s->db);
	}
	sqlite3_finalize(st);
	return rc;
}

/* Imports the cases; one that exists already is an error (the document would redefine it). */
static int import_cases(struct xp_store *s, json_t *arr, json_t *seen, struct xp_err *err)
{
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		char path[64];
		snprintf(path, sizeof path, "$.cases[%zu]", i);
		if (!json_is_object(o))
			return xp_errf(err, "%s: expected an object", path);
		struct xp_case c = {0};
		if (jstring(o, "name", path, XP_CASE_NAME_MAX, true, (const char **)&c.name, err) < 0 ||
		    jstring(o, "image", path, TEXT_MAX, false, (const char **)&c.image, err) < 0 ||
		    jstring(o, "model", path, TEXT_MAX, false, (const char **)&c.model, err) < 0 ||
		    jstring(o, "data", path, TEXT_MAX, false, (const char **)&c.data, err) < 0 ||
		    jstring(o, "acceptance", path, TEXT_MAX, false, (const char **)&c.acceptance, err) < 0 ||
		    jstring(o, "team", path, FIELD_MAX, false, (const char **)&c.team, err) < 0 ||
		    jtime_get(o, "created", path, false, &c.created, err) < 0)
			return -1;
		json_t *entry = json_object_get(o, "entry");
		size_t n = json_is_array(entry) ? json_array_size(entry) : 0;
		if (entry && !json_is_null(entry) && (!json_is_array(entry) || n == 0 || n > ENTRY_MAX_ARGS))
			return xp_errf(err, "%s.entry: expected a list of 1 to %d strings", path, ENTRY_MAX_ARGS);
		for (size_t k = 0; k < n; k++)
			if (!json_is_string(json_array_get(entry, k)))
				return xp_errf(err, "%s.entry[%zu]: expected a string", path, k);
		if (n) {
			c.entry = xp_calloc(n + 1, sizeof *c.entry);
			for (size_t k = 0; k < n; k++)
				c.entry[k] = (char *)json_string_value(json_array_get(entry, k));
		}
		if (c.created == 0)
			c.created = time(NULL);
		int rc = check_case(&c, err);
		if (rc < 0)
			xp_err_prefix(err, "%s", path);
		json_t *dup = rc == 0 ? json_object_get(seen, c.name) : NULL;
		if (dup)
			rc = xp_errf(err, "%s.name: %s is listed twice (first at $.cases[%lld])", path, c.name,
				     (long long)json_integer_value(dup));
		int ex = rc == 0 ? case_exists(s, c.name, err) : 0;
		if (ex < 0)
			rc = -1;
		else if (ex)
			rc = xp_errf(err, "%s.name: case %s exists already", path, c.name);
		if (rc == 0) {
			json_object_set_new(seen, c.name, json_integer((json_int_t)i));
			rc = case_insert(s, &c, err);
		}
		free(c.entry);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* 1 when the row exists. */
static int exists(struct xp_store *s, sqlite3_stmt *st, const char *key, struct xp_err *err)
{
	sqlite3_reset(st);
	bind_text(st, 1, key);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return xp_store_fail(s, err, "importing");
	return rc == SQLITE_ROW;
}

static int import_results(struct xp_store *s, json_t *arr, struct xp_err *err)
{
	sqlite3_stmt *env_st = NULL, *case_st = NULL;
	if (prep(s, "SELECT 1 FROM environments WHERE id = ?", &env_st, err, "importing") < 0 ||
	    prep(s, "SELECT 1 FROM cases WHERE name = ?", &case_st, err, "importing") < 0) {
		sqlite3_finalize(env_st);
		return -1;
	}
	size_t i;
	json_t *o;
	int rc = 0;
	json_array_foreach(arr, i, o) {
		char path[64];
		snprintf(path, sizeof path, "$.results[%zu]", i);
		if (!json_is_object(o)) {
			rc = xp_errf(err, "%s: expected an object", path);
			break;
		}
		const char *env, *kase, *layer, *status;
		struct xp_evidence e = {0};
		if (jstring(o, "env", path, TEXT_MAX, true, &env, err) < 0 ||
		    jstring(o, "case", path, XP_CASE_NAME_MAX, true, &kase, err) < 0 ||
		    jstring(o, "layer", path, 32, true, &layer, err) < 0 ||
		    jstring(o, "status", path, 32, true, &status, err) < 0 ||
		    jtime_get(o, "time", path, true, &e.time, err) < 0 ||
		    jstring(o, "actor", path, FIELD_MAX, true, (const char **)&e.actor, err) < 0 ||
		    jstring(o, "note", path, TEXT_MAX, false, (const char **)&e.note, err) < 0 ||
		    jstring(o, "log_path", path, TEXT_MAX, false, (const char **)&e.log_path, err) < 0 ||
		    jstring(o, "log_sha256", path, 64, false, (const char **)&e.log_sha256, err) < 0 ||
		    check_hex(e.log_sha256, path, err) < 0 ||
		    jstring(o, "node", path, FIELD_MAX, false, (const char **)&e.node, err) < 0 ||
		    jstring(o, "driver", path, FIELD_MAX, false, (const char **)&e.driver, err) < 0 ||
		    jstring(o, "firmware", path, FIELD_MAX, false, (const char **)&e.firmware, err) < 0) {
			rc = -1;
			break;
		}
		/* Names only, exactly: a document is not a command line. */
		e.layer = -1;
		for (int l = 0; l < XP_LAYER_COUNT; l++)
			if (strcmp(layer, layer_names[l]) == 0)
				e.layer = l;
		e.status = xp_vstatus_parse(status);
		if (e.layer < 0)
			rc = xp_errf(err, "%s.layer: unknown layer %s (discovered, schedulable, launches, executes, accepted)",
				     path, layer);
		else if (e.status != XP_V_PASS && e.status != XP_V_FAIL && e.status != XP_V_STALE)
			rc = xp_errf(err, "%s.status: %s is not pass, fail or stale", path, status);
		int ex = rc < 0 ? 0 : exists(s, env_st, env, err);
		if (ex == 0 && rc == 0)
			rc = xp_errf(err, "%s.env: no environment %s in the document or the database", path, env);
		ex = rc < 0 || ex < 0 ? -1 : exists(s, case_st, kase, err);
		if (ex == 0)
			rc = xp_errf(err, "%s.case: no case %s in the document or the database", path, kase);
		if (ex < 0 || rc < 0 || result_insert(s, env, kase, &e, err) < 0) {
			rc = -1;
			break;
		}
	}
	sqlite3_finalize(env_st);
	sqlite3_finalize(case_st);
	return rc;
}

/* After an import, every cell the document touched must obey the layer rule as `record`
 * does: no layer pass above a lower one that is not pass. */
static int import_check_layers(struct xp_store *s, json_t *results, struct xp_err *err)
{
	static const char sql[] =
		"WITH latest AS (SELECT layer, status FROM results r WHERE env = ?1 AND case_name = ?2 AND"
		" id = (SELECT max(id) FROM results r2 WHERE r2.env = r.env AND r2.case_name = r.case_name"
		" AND r2.layer = r.layer)),"
		" lower(l) AS (VALUES(0),(1),(2),(3))"
		" SELECT a.layer, lower.l, coalesce(b.status, 'untested') FROM latest a JOIN lower ON lower.l < a.layer"
		" LEFT JOIN latest b ON b.layer = lower.l"
		" WHERE a.status = 'pass' AND (b.status IS NULL OR b.status != 'pass') LIMIT 1";
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return xp_store_fail(s, err, "checking the imported layers");
	int rc = 0;
	size_t i;
	json_t *r;
	json_array_foreach(results, i, r) {
		const char *env = json_string_value(json_object_get(r, "env"));
		const char *kase = json_string_value(json_object_get(r, "case"));
		if (!env || !kase)
			continue;
		sqlite3_bind_text(st, 1, env, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, kase, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_ROW) {
			rc = xp_errf(err, "$.results[%zu]: %s / %s: %s pass above %s %s: a layer is pass only while every "
					  "layer below it is pass",
				     i, env, kase, xp_layer_name(sqlite3_column_int(st, 0)),
				     xp_layer_name(sqlite3_column_int(st, 1)), (const char *)sqlite3_column_text(st, 2));
			break;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int import_doc(struct xp_store *s, json_t *doc, const char *name, struct xp_err *err)
{
	if (!json_is_object(doc))
		return xp_errf(err, "$: expected an object");
	json_t *schema = json_object_get(doc, "schema");
	if (!json_is_string(schema) || strcmp(json_string_value(schema), XP_VALIDATE_SCHEMA) != 0)
		return xp_errf(err, "$.schema: expected \"%s\"%s%.60s%s", XP_VALIDATE_SCHEMA,
			       json_is_string(schema) ? ", not \"" : "", json_is_string(schema) ? json_string_value(schema) : "",
			       json_is_string(schema) ? "\"" : "");
	json_t *envs = jarray(doc, "environments", err), *cases = NULL, *results = NULL;
	if (envs)
		cases = jarray(doc, "cases", err);
	if (cases)
		results = jarray(doc, "results", err);
	if (!results) {
		json_decref(envs);
		json_decref(cases);
		return -1;
	}
	bool nested;
	int added = 0, rc = tx_begin(s, &nested, err);
	json_t *env_seen = json_object(), *case_seen = json_object();
	if (rc == 0)
		rc = import_envs(s, envs, env_seen, &added, err);
	if (rc == 0)
		rc = import_cases(s, cases, case_seen, err);
	if (rc == 0)
		rc = import_results(s, results, err);
	if (rc == 0)
		rc = import_check_layers(s, results, err);
	if (rc == 0) {
		/* One audit row for the whole document: it is one change, and says what it held. */
		json_t *a = json_object();
		json_object_set_new(a, "environments_added", json_integer(added));
		json_object_set_new(a, "cases", json_integer((json_int_t)json_array_size(cases)));
		json_object_set_new(a, "results", json_integer((json_int_t)json_array_size(results)));
		char *after = jdump(a);
		rc = xp_audit_add(s, "validate.import", name, NULL, after, err);
		free(after);
	}
	if (rc < 0)
		tx_rollback(s, nested);
	else
		rc = tx_commit(s, nested, err);
	json_decref(env_seen);
	json_decref(case_seen);
	json_decref(envs);
	json_decref(cases);
	json_decref(results);
	return rc;
}

int xp_validate_import(struct xp_store *s, const char *text, size_t len, const char *name, struct xp_err *err)
{
	if (!name)
		name = "<input>";
	json_error_t je;
	json_t *doc = json_loadb(text ? text : "", text ? len : 0, JSON_REJECT_DUPLICATES, &je);
	if (!doc)
		return xp_errf(err, "%s:%d:%d: %s", name, je.line, je.column, je.text);
	int rc = import_doc(s, doc, name, err);
	json_decref(doc);
	if (rc < 0)
		xp_err_prefix(err, "%s", name);
	return rc;
}
