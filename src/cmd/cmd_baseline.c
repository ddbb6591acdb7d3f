/* cmd_baseline.c: `xpool baseline add|list`: measured ECU coefficients per model and driver. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "model_json.h"
#include "store.h"
#include "store_open.h"
#include "table.h"

static const struct xp_opt baseline_opts[] = {
	{"verified", 0, NULL, "add: the measurement was checked (verified baselines win)"},
	{NULL, 0, NULL, NULL},
};

static int list(struct xp_ctx *ctx, struct xp_store *s)
{
	struct xp_baseline *rows;
	size_t n;
	struct xp_err err = {{0}};
	if (xp_baseline_list(s, &rows, &n, &err) < 0) {
		xp_ctx_error(ctx, "baseline list: %s", err.msg);
		return XP_EXIT_ERROR;
	}
	if (ctx->json) {
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "model", xp_json_str(rows[i].model));
			json_object_set_new(o, "driver", xp_json_str(rows[i].driver));
			json_object_set_new(o, "benchmark", xp_json_str(rows[i].benchmark));
			json_object_set_new(o, "coefficient", json_real(rows[i].coefficient));
			json_object_set_new(o, "actor", xp_json_str(rows[i].actor));
			json_object_set_new(o, "time", json_integer((json_int_t)rows[i].time));
			json_object_set_new(o, "verified", json_boolean(rows[i].verified));
			json_array_append_new(a, o);
		}
		xp_print_json_list(ctx->out, "baselines", a);
	} else if (!n) {
		fprintf(ctx->out, "no baselines: ECU uses the manifests' default coefficients\n");
	} else {
		struct xp_table t;
		xp_table_init(&t, 7);
		xp_table_row(&t, "MODEL", "DRIVER", "BENCHMARK", "COEFFICIENT", "VERIFIED", "ACTOR", "TIME");
		for (size_t i = 0; i < n; i++) {
			char coef[32], when[32];
			struct tm tm;
			localtime_r(&rows[i].time, &tm);
			strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
			snprintf(coef, sizeof coef, "%.3f", rows[i].coefficient);
			xp_table_row(&t, rows[i].model, rows[i].driver, rows[i].benchmark, coef,
				     rows[i].verified ? "yes" : "no", rows[i].actor, when);
		}
		xp_table_print(&t, ctx->out, "");
		xp_table_free(&t);
	}
	xp_baseline_free(rows, n);
	return XP_EXIT_OK;
}

static int baseline_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	const char *sub = a->argv[0];
	bool add = strcmp(sub, "add") == 0;
	if ((!add && strcmp(sub, "list") != 0) || (add && a->argc != 5) || (!add && a->argc != 1)) {
		xp_ctx_error(ctx, "baseline: usage: xpool baseline add MODEL DRIVER BENCHMARK COEFFICIENT [--verified] "
				  "| list");
		return XP_EXIT_USAGE;
	}
	struct xp_err err = {{0}};
	struct xp_store *s = add ? xp_store_open(ctx->db, &err) : xp_store_for_reading(ctx->db, NULL, &err);
	if (!s) {
		xp_ctx_error(ctx, "baseline: %s", err.msg);
		return XP_EXIT_ERROR;
	}
	int rc;
	if (add) {
		char *end;
		double c = strtod(a->argv[4], &end);
		if (end == a->argv[4] || *end || !(c > 0) || !isfinite(c)) {
			xp_ctx_error(ctx, "baseline add: coefficient '%s' is not a positive number", a->argv[4]);
			xp_store_close(s);
			return XP_EXIT_USAGE;
		}
		struct xp_baseline b = {.model = a->argv[1], .driver = a->argv[2], .benchmark = a->argv[3],
					.coefficient = c, .verified = xp_args_has(a, "verified")};
		rc = xp_baseline_add(s, &b, &err) < 0 ? XP_EXIT_ERROR : XP_EXIT_OK;
		if (rc)
			xp_ctx_error(ctx, "baseline add: %s", err.msg);
		else
			fprintf(ctx->out, "baseline %s / %s: %g (%s)%s\n", b.model, b.driver, c, b.benchmark,
				b.verified ? ", verified" : "");
	} else
		rc = list(ctx, s);
	xp_store_close(s);
	return rc;
}

static const struct xp_subcmd baseline_subs[] = {
	{"add", false}, {"list", true}, {NULL, false},
};
const struct xp_cmd_entry xp_cmd_baseline_entry = {
	.name = "baseline",
	.alias = NULL,
	.usage = "add MODEL DRIVER BENCHMARK COEFFICIENT [--verified] | list",
	.summary = "benchmark baselines: measured ECU coefficients per model and driver",
	.opts = baseline_opts,
	.min_args = 1,
	.max_args = 5,
	.exec = baseline_exec,
	.subs = baseline_subs,
};
