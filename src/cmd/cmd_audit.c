/* cmd_audit.c: `xpool audit [--since T] [--json]`: who changed what, and when. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "model_json.h"
#include "store.h"
#include "store_open.h"
#include "table.h"

static const struct xp_opt audit_opts[] = {
	{"since", 0, "TIME", "only entries from TIME on: seconds since 1970, YYYY-MM-DD, or an age (30m, 12h, 7d)"},
	{"limit", 0, "N", "at most N entries (the newest)"},
	{NULL, 0, NULL, NULL},
};

/* TIME as an absolute epoch, a date, or an age before now. */
static int parse_since(const char *s, time_t now, time_t *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	if (end != s && !*end && v >= 0) {
		*out = (time_t)v;
		return 0;
	}
	if (end != s && v > 0 && end[1] == '\0') {
		long long mul = *end == 's' ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 : *end == 'd' ? 86400 : 0;
		if (mul) {
			*out = now - (time_t)(v * mul);
			return 0;
		}
	}
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	const char *rest = strptime(s, "%Y-%m-%d", &tm);
	if (rest && !*rest) {
		tm.tm_isdst = -1;
		*out = mktime(&tm);
		return 0;
	}
	return -1;
}

static int audit_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	(void)a;
	time_t since = 0, now = time(NULL);
	const char *sv = xp_args_get(a, "since");
	if (sv && parse_since(sv, now, &since) < 0) {
		xp_ctx_error(ctx, "audit: --since %s: not seconds, YYYY-MM-DD, or an age like 12h", sv);
		return XP_EXIT_USAGE;
	}
	size_t limit = 0;
	const char *lv = xp_args_get(a, "limit");
	if (lv) {
		char *end;
		long long k = strtoll(lv, &end, 10);
		if (*end || k <= 0) {
			xp_ctx_error(ctx, "audit: --limit %s: not a positive number", lv);
			return XP_EXIT_USAGE;
		}
		limit = (size_t)k;
	}
	struct xp_err err = {{0}};
	struct xp_store *s = xp_store_for_reading(ctx->db, NULL, &err); /* a look: never creates it */
	if (!s) {
		xp_ctx_error(ctx, "audit: %s", err.msg);
		return XP_EXIT_ERROR;
	}
	struct xp_audit *rows;
	size_t n;
	if (xp_audit_list(s, since, 0, &rows, &n, &err) < 0) {
		xp_ctx_error(ctx, "audit: %s", err.msg);
		xp_store_close(s);
		return XP_EXIT_ERROR;
	}
	size_t first = limit && n > limit ? n - limit : 0;
	if (ctx->json) {
		json_t *list = json_array();
		for (size_t i = first; i < n; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "id", json_integer(rows[i].id));
			json_object_set_new(o, "time", json_integer((json_int_t)rows[i].time));
			json_object_set_new(o, "actor", xp_json_str(rows[i].actor));
			json_object_set_new(o, "action", xp_json_str(rows[i].action));
			json_object_set_new(o, "target", xp_json_str(rows[i].target));
			/* before/after are JSON already: embed them, not their text. */
			json_t *b = rows[i].before ? json_loads(rows[i].before, JSON_DECODE_ANY, NULL) : NULL;
			json_t *af = rows[i].after ? json_loads(rows[i].after, JSON_DECODE_ANY, NULL) : NULL;
			json_object_set_new(o, "before", b ? b : json_null());
			json_object_set_new(o, "after", af ? af : json_null());
			json_array_append_new(list, o);
		}
		xp_print_json_list(ctx->out, "audit", list);
	} else if (n == first) {
		fprintf(ctx->out, "no audit entries%s\n", sv ? " in that time" : "");
	} else {
		struct xp_table t;
		xp_table_init(&t, 5);
		xp_table_row(&t, "TIME", "ACTOR", "ACTION", "TARGET", "CHANGE");
		for (size_t i = first; i < n; i++) {
			char when[32], change[200];
			struct tm tm;
			localtime_r(&rows[i].time, &tm);
			strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
			snprintf(change, sizeof change, "%.90s -> %.90s", rows[i].before ? rows[i].before : "-",
				 rows[i].after ? rows[i].after : "-");
			xp_table_row(&t, when, rows[i].actor, rows[i].action, rows[i].target, change);
		}
		xp_table_print(&t, ctx->out, "");
		xp_table_free(&t);
	}
	xp_audit_free(rows, n);
	xp_store_close(s);
	return XP_EXIT_OK;
}

const struct xp_cmd_entry xp_cmd_audit_entry = {
	.name = "audit",
	.alias = NULL,
	.usage = "[--since TIME] [--limit N] [--json]",
	.summary = "the audit log: every change to the database, who made it, before and after",
	.opts = audit_opts,
	.min_args = 0,
	.max_args = 0,
	.exec = audit_exec,
	.json = true,
};
