/* cmd_validate.c: `xpool validate SUBCOMMAND ...`: the validation matrix from the
 * command line. One command with tmux-style subcommand words, so that `help` lists one
 * line and the console prompt completes one name. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "files.h"
#include "model_json.h"
#include "store.h"
#include "table.h"
#include "store_open.h"
#include "validate.h"

/* A probe that says nothing for ten minutes is not coming back. */
#define RUN_TIMEOUT_S 600.0
/* Largest import document read: a matrix of 100,000 records is about 40 MiB of JSON. */
#define IMPORT_MAX ((size_t)256 << 20)

static const char *layer_value(int i)
{
	return i >= 0 && i < XP_LAYER_COUNT ? xp_layer_name(i) : NULL;
}

static const struct xp_opt validate_opts[] = {
	{"image", 0, "IMAGE", "case add: the container image"},
	{"model", 0, "MODEL", "case add: the model (name and version)"},
	{"data", 0, "DATA", "case add: the data set version"},
	{"entry", 0, "\"CMD ARGS\"", "case add: the probe command, split into words and run without a shell"},
	{"acceptance", 0, "TEXT", "case add: the acceptance rule"},
	{"team", 0, "TEAM", "case add: the owning team"},
	{"firmware", 0, "VERSION", "env declare: the firmware version"},
	{"runtime", 0, "VERSION", "env declare: the runtime version (CUDA, CANN, ROCm, ...)"},
	{"log", 0, "FILE", "record: the evidence log; its SHA-256 is recorded with it"},
	{"note", 0, "TEXT", "record: a note kept with the record"},
	{"node", 0, "NODE", "record, run: the node the evidence comes from"},
	{"env", 0, "ENV", "run: the environment (default: the only one the node's devices show)"},
	{"layer", 0, "LAYER", "run: the layer to record (default executes)", layer_value},
	{"timeout", 0, "SECONDS", "run: kill the probe after SECONDS (default 600)"},
	{"log-dir", 0, "DIR", "run: where logs go (default $XDG_STATE_HOME/xpool/logs)"},
	{"csv", 0, NULL, "matrix: print CSV, one line per cell layer"},
	{NULL, 0, NULL, NULL},
};

struct sub;
typedef int (*sub_fn)(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);

/* One subcommand: its words, its positional arguments, the options that apply. */
struct sub {
	const char *group, *name; /* "case", "add"; group NULL for one-word subcommands */
	const char *usage;        /* what follows the words */
	const char *opts;         /* options that apply, each between spaces */
	int min, max;             /* positional arguments after the words */
	sub_fn fn;
	bool writes;              /* opens the database writable; the others only look */
};

static int do_matrix(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_sync(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_case_add(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_case_rm(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_case_show(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_case_list(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_env_declare(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_env_list(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_record(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_run(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_history(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_import(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);
static int do_export(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s);

static const struct sub subs[] = {
	{NULL, "matrix", "[--json|--csv]", " csv ", 0, 0, do_matrix},
	{NULL, "sync", "", " ", 0, 0, do_sync, true},
	{"case", "add",
	 "NAME [--image I] [--model M] [--data D] [--entry \"CMD ARGS\"] [--acceptance TEXT] [--team T]",
	 " image model data entry acceptance team ", 1, 1, do_case_add, true},
	{"case", "rm", "NAME", " ", 1, 1, do_case_rm, true},
	{"case", "show", "NAME [--json]", " ", 1, 1, do_case_show},
	{"case", "list", "[--json]", " ", 0, 0, do_case_list},
	{"env", "declare", "VENDOR MODEL DRIVER [--firmware F] [--runtime R]", " firmware runtime ", 3, 3,
	 do_env_declare, true},
	{"env", "list", "[--json]", " ", 0, 0, do_env_list},
	{NULL, "record", "ENV CASE LAYER pass|fail [--log FILE] [--note TEXT] [--node N]", " log note node ", 4, 4,
	 do_record, true},
	{NULL, "run", "CASE --node NODE [--env ENV] [--layer L] [--timeout S] [--log-dir DIR]",
	 " node env layer timeout log-dir ", 1, 1, do_run, true},
	{NULL, "history", "ENV CASE [--json]", " ", 2, 2, do_history},
	{NULL, "import", "FILE", " ", 1, 1, do_import, true},
	{NULL, "export", "[FILE]", " ", 0, 1, do_export},
};
#define N_SUBS (sizeof subs / sizeof subs[0])

static void sub_words(const struct sub *u, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", u->group ? u->group : "", u->group ? " " : "", u->name);
}

static void print_usage(FILE *f)
{
	for (size_t i = 0; i < N_SUBS; i++) {
		char w[32];
		sub_words(&subs[i], w, sizeof w);
		fprintf(f, "%s xpool validate %s%s%s\n", i ? "      " : "usage:", w, *subs[i].usage ? " " : "",
			subs[i].usage);
	}
	fprintf(f, "\nENV is an environment id (vendor:model:driver[:firmware:runtime]) or a unique prefix of one.\n"
		   "LAYER is discovered, schedulable, launches, executes or accepted (or 0-4, or a prefix).\n"
		   "A layer is recorded pass only while every layer below it is pass; fail is always allowed.\n"
		   "sync, and matrix before it shows anything, bring the discovered layer up to date from the\n"
		   "inventory and mark stale the evidence taken on nodes whose driver or firmware has changed.\n"
		   "matrix: environments down, cases across, five marks per cell, one per layer:\n"
		   "P pass, F fail, S stale, . untested. Exit status 4 when the inventory could not be read\n"
		   "(the stored matrix is shown). run exits 1 when the probe failed (the fail is recorded).\n");
}

/* ---- printing helpers ---- */

static const char *fmt_time(char *buf, size_t len, time_t t)
{
	if (t <= 0)
		return NULL;
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	return buf;
}

/* A CSV field (RFC 4180): quoted when it holds a separator, a quote or a line break. */
static void csv_field(FILE *f, const char *s, bool last)
{
	if (s && strpbrk(s, ",\"\r\n")) {
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	} else if (s) {
		fputs(s, f);
	}
	fputc(last ? '\n' : ',', f);
}

static void print_csv(FILE *f, const struct xp_matrix *m)
{
	fputs("env,case,layer,status,time,actor,node,log_sha256,note\n", f);
	for (size_t i = 0; i < m->n_envs * m->n_cases; i++) {
		const struct xp_cell *c = &m->cells[i];
		for (int l = 0; l < XP_LAYER_COUNT; l++) {
			const struct xp_evidence *e = &c->layers[l];
			char when[32] = "";
			if (e->time > 0) {
				struct tm tm;
				gmtime_r(&e->time, &tm);
				strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
			}
			csv_field(f, m->envs[c->env].id, false);
			csv_field(f, m->cases[c->kase].name, false);
			csv_field(f, xp_layer_name(l), false);
			csv_field(f, xp_vstatus_name(e->status), false);
			csv_field(f, when, false);
			csv_field(f, e->actor, false);
			csv_field(f, e->node, false);
			csv_field(f, e->log_sha256, false);
			csv_field(f, e->note, true);
		}
	}
}

static void cell_marks(const struct xp_cell *c, char out[XP_LAYER_COUNT + 1], size_t *passes)
{
	for (int l = 0; l < XP_LAYER_COUNT; l++) {
		out[l] = xp_vstatus_mark(c->layers[l].status);
		if (c->layers[l].status == XP_V_PASS)
			(*passes)++;
	}
	out[XP_LAYER_COUNT] = '\0';
}

static void print_matrix(FILE *f, const struct xp_matrix *m)
{
	if (!m->n_envs || !m->n_cases) {
		if (!m->n_envs)
			fprintf(f, "no environments: they come from the inventory ('xpool validate sync') or are declared "
				   "('xpool validate env declare')\n");
		if (!m->n_cases)
			fprintf(f, "no cases: add one with 'xpool validate case add NAME'\n");
		return;
	}
	size_t ncols = m->n_cases + 2;
	struct xp_table t;
	xp_table_init(&t, ncols);
	const char **row = xp_calloc(ncols, sizeof *row);
	char *text = xp_calloc(ncols, 32); /* this row's marks and totals */
	size_t *col = xp_calloc(m->n_cases, sizeof *col), all = 0;
	row[0] = "ENVIRONMENT";
	for (size_t k = 0; k < m->n_cases; k++)
		row[k + 1] = m->cases[k].name;
	row[ncols - 1] = "PASS";
	xp_table_rowv(&t, row);
	for (size_t e = 0; e < m->n_envs; e++) {
		size_t passes = 0;
		char *shown = xp_env_id_show(m->envs[e].id);
		row[0] = shown;
		for (size_t k = 0; k < m->n_cases; k++) {
			size_t before = passes;
			cell_marks(&m->cells[e * m->n_cases + k], text + 32 * (k + 1), &passes);
			col[k] += passes - before;
			row[k + 1] = text + 32 * (k + 1);
		}
		all += passes;
		snprintf(text, 32, "%zu/%zu", passes, m->n_cases * XP_LAYER_COUNT);
		row[ncols - 1] = text;
		xp_table_rowv(&t, row);
		free(shown);
	}
	row[0] = "PASS";
	for (size_t k = 0; k < m->n_cases; k++) {
		snprintf(text + 32 * (k + 1), 32, "%zu", col[k]);
		row[k + 1] = text + 32 * (k + 1);
	}
	snprintf(text, 32, "%zu/%zu", all, m->n_envs * m->n_cases * XP_LAYER_COUNT);
	row[ncols - 1] = text;
	xp_table_rowv(&t, row);
	xp_table_print(&t, f, "");
	xp_table_free(&t);
	fprintf(f, "legend: five marks per cell, one per layer: discovered schedulable launches executes accepted;\n"
		   "        P pass  F fail  S stale  . untested\n");
	free(row);
	free(text);
	free(col);
}

/* ---- subcommands ---- */

static int fail(struct xp_ctx *ctx, const char *sub, const struct xp_err *err)
{
	xp_ctx_error(ctx, "validate %s: %s", sub, err->msg);
	return XP_EXIT_ERROR;
}

static int do_matrix(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	(void)argv;
	struct xp_err err = {{0}};
	int rc = XP_EXIT_OK;
	/* The discovered layer is what a live source (this machine, a replay, agents) shows
	 * now: recorded first when it shows something new. A file (snapshot, sim gen) is only
	 * looked at; `validate sync` records it. */
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	struct xp_store *fresh = NULL; /* after a sync: s may be the empty stand-in for no file */
	int synced = c ? xp_sync_if_changed(ctx->db, s, c, 0, &err) : 0;
	if (synced > 0 && (fresh = xp_store_for_reading(ctx->db, NULL, &err)))
		s = fresh;
	if (!c) {
		xp_ctx_error(ctx, "validate matrix: the inventory could not be read; showing the stored matrix");
		rc = XP_EXIT_PARTIAL;
	} else if (synced < 0) {
		xp_ctx_error(ctx, "validate matrix: sync: %s; showing the stored matrix", err.msg);
		rc = XP_EXIT_PARTIAL;
	} else if (!ctx->json && !xp_args_has(a, "csv") && xp_files_unrecorded(s, c)) {
		fprintf(ctx->err, "validate matrix: the inventory is a file: what it shows is not recorded "
				  "('xpool validate sync' records it)\n");
	}
	struct xp_matrix m;
	int got = xp_validate_matrix(s, &m, &err);
	xp_store_close(fresh);
	if (got < 0)
		return fail(ctx, "matrix", &err);
	if (ctx->json)
		xp_print_json(ctx->out, xp_matrix_to_json(&m));
	else if (xp_args_has(a, "csv"))
		print_csv(ctx->out, &m);
	else
		print_matrix(ctx->out, &m);
	xp_matrix_free(&m);
	return rc;
}

static int do_sync(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	(void)a;
	(void)argv;
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (!c)
		return XP_EXIT_ERROR;
	if (xp_validate_sync(s, c, time(NULL), XP_SYNC_FILES, &err) < 0)
		return fail(ctx, "sync", &err);
	fprintf(ctx->out, "synced with %zu node%s, %zu accelerator%s\n", c->n_nodes, c->n_nodes == 1 ? "" : "s",
		xp_cluster_device_count(c), xp_cluster_device_count(c) == 1 ? "" : "s");
	return XP_EXIT_OK;
}

static int do_case_add(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	struct xp_err err = {{0}};
	struct xp_case c = {.name = argv[0],
			    .image = (char *)xp_args_get(a, "image"),
			    .model = (char *)xp_args_get(a, "model"),
			    .data = (char *)xp_args_get(a, "data"),
			    .acceptance = (char *)xp_args_get(a, "acceptance"),
			    .team = (char *)xp_args_get(a, "team")};
	int wc = 0;
	char **words = NULL;
	const char *entry = xp_args_get(a, "entry");
	if (entry) {
		/* Split as the batch language splits a line; the words are an argv, never a shell line. */
		if (xp_cmd_split_argv(entry, &wc, &words, &err) < 0) {
			xp_ctx_error(ctx, "validate case add: --entry: %s", err.msg);
			return XP_EXIT_USAGE;
		}
		if (wc == 0) {
			xp_cmd_split_free(wc, words);
			xp_ctx_error(ctx, "validate case add: --entry: the command is empty");
			return XP_EXIT_USAGE;
		}
		c.entry = words;
	}
	int rc = xp_validate_case_add(s, &c, &err);
	xp_cmd_split_free(wc, words);
	if (rc < 0)
		return fail(ctx, "case add", &err);
	fprintf(ctx->out, "added case %s\n", argv[0]);
	return XP_EXIT_OK;
}

static int do_case_rm(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	(void)a;
	struct xp_err err = {{0}};
	if (xp_validate_case_rm(s, argv[0], &err) < 0)
		return fail(ctx, "case rm", &err);
	fprintf(ctx->out, "removed case %s and its results\n", argv[0]);
	return XP_EXIT_OK;
}

/* The entry as it would be typed: words with spaces or quotes in single quotes. */
static void print_entry(FILE *f, char *const *entry)
{
	for (size_t i = 0; entry[i]; i++) {
		const char *w = entry[i];
		fputs(i ? " " : "", f);
		if (*w && !strpbrk(w, " \t'\"\\#"))
			fputs(w, f);
		else {
			fputc('\'', f);
			for (; *w; w++) {
				if (*w == '\'')
					fputs("'\\''", f);
				else
					fputc(*w, f);
			}
			fputc('\'', f);
		}
	}
}

static int do_case_show(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	(void)a;
	struct xp_err err = {{0}};
	struct xp_case c;
	if (xp_validate_case_get(s, argv[0], &c, &err) < 0)
		return fail(ctx, "case show", &err);
	struct xp_matrix m;
	if (xp_validate_matrix(s, &m, &err) < 0) {
		xp_case_clear(&c);
		return fail(ctx, "case show", &err);
	}
	size_t k = 0;
	while (k < m.n_cases && strcmp(m.cases[k].name, c.name) != 0)
		k++;
	if (ctx->json) {
		json_t *j = xp_case_to_json(&c), *cells = json_array();
		for (size_t e = 0; k < m.n_cases && e < m.n_envs; e++) {
			const struct xp_cell *cell = &m.cells[e * m.n_cases + k];
			json_t *o = json_object(), *layers = json_object();
			json_object_set_new(o, "env", xp_json_str(m.envs[e].id));
			for (int l = 0; l < XP_LAYER_COUNT; l++)
				json_object_set_new(layers, xp_layer_name(l), xp_evidence_to_json(&cell->layers[l], false));
			json_object_set_new(o, "layers", layers);
			json_array_append_new(cells, o);
		}
		json_object_set_new(j, "cells", cells);
		xp_print_json(ctx->out, j);
	} else {
		FILE *f = ctx->out;
		char when[32];
		const char *names[] = {"image", "model", "data", "acceptance", "team"};
		const char *vals[] = {c.image, c.model, c.data, c.acceptance, c.team};
		fprintf(f, "case        %s\n", c.name);
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			fprintf(f, "%-11s %s\n", names[i], vals[i] ? vals[i] : "-");
		fprintf(f, "entry       ");
		if (c.entry)
			print_entry(f, c.entry);
		else
			fputc('-', f);
		const char *t = fmt_time(when, sizeof when, c.created);
		fprintf(f, "\ncreated     %s\n", t ? t : "-");
		size_t shown = 0;
		for (size_t e = 0; k < m.n_cases && e < m.n_envs; e++) {
			const struct xp_cell *cell = &m.cells[e * m.n_cases + k];
			char marks[XP_LAYER_COUNT + 1];
			size_t passes = 0;
			cell_marks(cell, marks, &passes);
			if (strspn(marks, ".") == XP_LAYER_COUNT)
				continue;
			fprintf(f, "%s%s  %s\n", shown++ ? "            " : "evidence    ", marks, m.envs[e].id);
		}
		if (!shown)
			fprintf(f, "evidence    none yet\n");
	}
	xp_matrix_free(&m);
	xp_case_clear(&c);
	return XP_EXIT_OK;
}

static int do_case_list(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	(void)a;
	(void)argv;
	struct xp_err err = {{0}};
	struct xp_case *cs;
	size_t n;
	if (xp_validate_case_list(s, &cs, &n, &err) < 0)
		return fail(ctx, "case list", &err);
	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, xp_case_to_json(&cs[i]));
		xp_print_json_list(ctx->out, "cases", arr);
	} else if (!n) {
		fprintf(ctx->out, "no cases: add one with 'xpool validate case add NAME'\n");
	} else {
		struct xp_table t;
		xp_table_init(&t, 6);
		xp_table_row(&t, "CASE", "TEAM", "IMAGE", "MODEL", "DATA", "ACCEPTANCE");
		for (size_t i = 0; i < n; i++)
			xp_table_row(&t, cs[i].name, cs[i].team, cs[i].image, cs[i].model, cs[i].data, cs[i].acceptance);
		xp_table_print(&t, ctx->out, "");
		xp_table_free(&t);
	}
	xp_case_list_free(cs, n);
	return XP_EXIT_OK;
}

static int do_env_declare(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	struct xp_err err = {{0}};
	struct xp_env e = {.vendor = argv[0], .model = argv[1], .driver = argv[2],
			   .firmware = (char *)xp_args_get(a, "firmware"), .runtime = (char *)xp_args_get(a, "runtime")};
	int rc = xp_validate_env_declare(s, &e, &err);
	if (rc < 0)
		return fail(ctx, "env declare", &err);
	char *id = xp_env_id(e.vendor, e.model, e.driver, e.firmware, e.runtime), *shown = xp_env_id_show(id);
	fprintf(ctx->out, rc == 1 ? "environment %s was declared already\n" : "declared environment %s\n", shown);
	free(shown);
	free(id);
	return XP_EXIT_OK;
}

static int do_env_list(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	(void)a;
	(void)argv;
	struct xp_err err = {{0}};
	struct xp_env *es;
	size_t n;
	if (xp_validate_env_list(s, &es, &n, &err) < 0)
		return fail(ctx, "env list", &err);
	if (ctx->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, xp_env_to_json(&es[i]));
		xp_print_json_list(ctx->out, "environments", arr);
	} else if (!n) {
		fprintf(ctx->out, "no environments: they come from the inventory ('xpool validate sync') or are "
				  "declared ('xpool validate env declare')\n");
	} else {
		struct xp_table t;
		xp_table_init(&t, 4);
		xp_table_row(&t, "ENVIRONMENT", "DECLARED", "FIRST SEEN", "LAST SEEN");
		for (size_t i = 0; i < n; i++) {
			char f1[32], f2[32], *shown = xp_env_id_show(es[i].id);
			xp_table_row(&t, shown, es[i].declared ? "yes" : "no", fmt_time(f1, sizeof f1, es[i].first_seen),
				     fmt_time(f2, sizeof f2, es[i].last_seen));
			free(shown);
		}
		xp_table_print(&t, ctx->out, "");
		xp_table_free(&t);
	}
	xp_env_list_free(es, n);
	return XP_EXIT_OK;
}

static int parse_layer(struct xp_ctx *ctx, const char *sub, const char *s)
{
	int l = xp_layer_parse(s);
	if (l < 0)
		xp_ctx_error(ctx, "validate %s: unknown layer %s (discovered, schedulable, launches, executes, accepted)",
			     sub, s);
	return l;
}

/* Environments come from discovery: bring them up to date before naming one, so that
 * `record` works on a fresh database without a `matrix` or `sync` first. */
static void sync_quietly(struct xp_ctx *ctx, struct xp_store *s)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (c)
		xp_validate_sync(s, c, time(NULL), XP_SYNC_FILES, &err);
}

/* The node evidence comes from. Staleness follows nodes, so evidence without one would
 * never turn stale: default to the only node of the inventory, require one among several. */
static const char *evidence_node(struct xp_ctx *ctx, const char *given, bool *ok)
{
	*ok = true;
	struct xp_cluster *c = ctx->cluster;
	if (!c || c->n_nodes == 0)
		return given;
	if (given) {
		/* Evidence from a node this inventory does not show (recorded from elsewhere) is
		 * kept; it turns stale once an inventory with that node shows a change. */
		if (!xp_cluster_node(c, given) && !ctx->quiet)
			fprintf(ctx->err, "xpool: validate record: note: node %s is not in this inventory\n", given);
		return given;
	}
	if (c->n_nodes == 1)
		return c->nodes[0]->name;
	xp_ctx_error(ctx, "validate record: give --node (the inventory has %zu nodes): evidence without a node "
			  "could never turn stale", c->n_nodes);
	*ok = false;
	return NULL;
}

static int do_record(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	struct xp_err err = {{0}};
	sync_quietly(ctx, s);
	bool node_ok;
	const char *node = evidence_node(ctx, xp_args_get(a, "node"), &node_ok);
	if (!node_ok)
		return XP_EXIT_ERROR;
	int layer = parse_layer(ctx, "record", argv[2]);
	if (layer < 0)
		return XP_EXIT_ERROR;
	int status = xp_vstatus_parse(argv[3]);
	if (status != XP_V_PASS && status != XP_V_FAIL) {
		xp_ctx_error(ctx, "validate record: unknown status %s (pass or fail)", argv[3]);
		return XP_EXIT_ERROR;
	}
	char *id = xp_validate_env_resolve(s, argv[0], &err);
	if (!id)
		return fail(ctx, "record", &err);
	int rc = xp_validate_record(s, id, argv[1], layer, status, xp_args_get(a, "note"), xp_args_get(a, "log"),
				    node, &err);
	if (rc == 0) {
		char *shown = xp_env_id_show(id);
		fprintf(ctx->out, "recorded %s %s %s %s\n", shown, argv[1], xp_layer_name(layer), xp_vstatus_name(status));
		free(shown);
	}
	free(id);
	return rc < 0 ? fail(ctx, "record", &err) : XP_EXIT_OK;
}

/* The environment of a node's devices when there is exactly one; NULL after saying why. */
static char *node_env(struct xp_ctx *ctx, const char *node)
{
	struct xp_cluster *c = xp_ctx_cluster(ctx);
	if (!c)
		return NULL;
	struct xp_node *n = xp_cluster_node(c, node);
	if (!n) {
		xp_ctx_error(ctx, "validate run: no node named %s in the inventory; give --env", node);
		return NULL;
	}
	char *found = NULL;
	size_t kinds = 0;
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		if (!d->vendor || !d->model || !d->driver)
			continue;
		char *id = xp_env_id(d->vendor, d->model, d->driver, d->firmware, d->runtime);
		if (!found) {
			found = id;
			kinds = 1;
		} else {
			kinds += strcmp(found, id) != 0;
			free(id);
		}
	}
	if (kinds != 1) {
		xp_ctx_error(ctx, "validate run: node %s shows %s; give --env", node,
			     kinds ? "several environments" : "no accelerator with a known driver");
		free(found);
		return NULL;
	}
	return found;
}

static int do_run(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	struct xp_err err = {{0}};
	sync_quietly(ctx, s);
	const char *node = xp_args_get(a, "node");
	if (!node) {
		xp_ctx_error(ctx, "validate run: --node NODE is required (the node the evidence comes from)");
		return XP_EXIT_USAGE;
	}
	int layer = XP_LAYER_EXECUTES;
	if (xp_args_has(a, "layer") && (layer = parse_layer(ctx, "run", xp_args_get(a, "layer"))) < 0)
		return XP_EXIT_ERROR;
	double timeout = RUN_TIMEOUT_S;
	const char *tv = xp_args_get(a, "timeout");
	if (tv) {
		char *end;
		timeout = strtod(tv, &end);
		if (end == tv || *end || !(timeout > 0 && timeout <= 7 * 86400)) {
			xp_ctx_error(ctx, "validate run: --timeout %s: not a number of seconds from 0 to a week", tv);
			return XP_EXIT_USAGE;
		}
	}
	char *env = xp_args_has(a, "env") ? xp_validate_env_resolve(s, xp_args_get(a, "env"), &err) : node_env(ctx, node);
	if (!env)
		return xp_args_has(a, "env") ? fail(ctx, "run", &err) : XP_EXIT_ERROR;
	char *dir = xp_args_has(a, "log-dir") ? xp_strdup(xp_args_get(a, "log-dir")) : xp_validate_default_log_dir();
	int rc = xp_validate_run(s, argv[0], env, layer, node, timeout, dir, &err);
	struct xp_evidence ev[XP_LAYER_COUNT];
	if (rc == 0 && xp_validate_cell(s, env, argv[0], ev, &err) < 0)
		rc = -1;
	if (rc == 0) {
		const struct xp_evidence *e = &ev[layer];
		fprintf(ctx->out, "%s on %s: %s %s (%s)\nlog %s\nsha256 %s\n", argv[0], env, xp_layer_name(layer),
			xp_vstatus_name(e->status), e->note ? e->note : "", e->log_path ? e->log_path : "-",
			e->log_sha256 ? e->log_sha256 : "-");
		if (e->status != XP_V_PASS) {
			xp_ctx_error(ctx, "validate run: %s failed on %s (%s); the fail is recorded", argv[0], env,
				     e->note ? e->note : "");
			rc = 1;
		}
		xp_evidence_clear(ev, XP_LAYER_COUNT);
	}
	free(env);
	free(dir);
	if (rc < 0)
		return fail(ctx, "run", &err);
	return rc ? XP_EXIT_ERROR : XP_EXIT_OK;
}

static int do_history(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	(void)a;
	struct xp_err err = {{0}};
	char *id = xp_validate_env_resolve(s, argv[0], &err);
	if (!id)
		return fail(ctx, "history", &err);
	struct xp_evidence *rows;
	size_t n;
	if (xp_validate_history(s, id, argv[1], &rows, &n, &err) < 0) {
		free(id);
		return fail(ctx, "history", &err);
	}
	if (ctx->json) {
		json_t *arr = json_array(), *doc = json_object();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, xp_evidence_to_json(&rows[i], true));
		json_object_set_new(doc, "env", xp_json_str(id));
		json_object_set_new(doc, "case", xp_json_str(argv[1]));
		json_object_set_new(doc, "history", arr);
		xp_print_json(ctx->out, doc);
	} else if (!n) {
		fprintf(ctx->out, "no records for %s %s: every layer is untested\n", id, argv[1]);
	} else {
		struct xp_table t;
		xp_table_init(&t, 8);
		xp_table_row(&t, "TIME", "LAYER", "STATUS", "ACTOR", "NODE", "DRIVER", "SHA256", "NOTE");
		for (size_t i = 0; i < n; i++) {
			char when[32], sha[16] = "";
			if (rows[i].log_sha256)
				snprintf(sha, sizeof sha, "%.12s", rows[i].log_sha256);
			xp_table_row(&t, fmt_time(when, sizeof when, rows[i].time), xp_layer_name(rows[i].layer),
				     xp_vstatus_name(rows[i].status), rows[i].actor, rows[i].node, rows[i].driver,
				     rows[i].log_sha256 ? sha : NULL, rows[i].note);
		}
		xp_table_print(&t, ctx->out, "");
		xp_table_free(&t);
	}
	xp_evidence_free(rows, n);
	free(id);
	return XP_EXIT_OK;
}

static int do_import(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	(void)a;
	struct xp_err err = {{0}};
	size_t len;
	char *text = xp_read_file(argv[0], IMPORT_MAX, &len, &err);
	if (!text)
		return fail(ctx, "import", &err);
	int rc = xp_validate_import(s, text, len, strcmp(argv[0], "-") == 0 ? "<stdin>" : argv[0], &err);
	free(text);
	if (rc < 0)
		return fail(ctx, "import", &err);
	fprintf(ctx->out, "imported %s\n", argv[0]);
	return XP_EXIT_OK;
}

static int do_export(struct xp_ctx *ctx, const struct xp_args *a, char **argv, struct xp_store *s)
{
	(void)a;
	struct xp_err err = {{0}};
	if (!argv[0] || strcmp(argv[0], "-") == 0)
		return xp_validate_export(s, ctx->out, &err) < 0 ? fail(ctx, "export", &err) : XP_EXIT_OK;
	/* Written beside the target and renamed over it: a failed export leaves no half file, and a
	 * link planted at the name is replaced, never followed; 0600, as the evidence names nodes,
	 * drivers and who ran what. */
	struct xp_afile af;
	int rc = xp_afile_open(&af, argv[0], XP_FMODE_PRIVATE, &err);
	if (rc == 0 && xp_validate_export(s, af.f, &err) < 0) {
		xp_afile_abort(&af);
		rc = -1;
	} else if (rc == 0) {
		rc = xp_afile_commit(&af, &err);
	}
	if (rc < 0)
		return fail(ctx, "export", &err);
	return XP_EXIT_OK;
}

/* ---- dispatch ---- */

static int validate_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	if (a->argc == 0) {
		xp_ctx_error(ctx, "validate: which subcommand? ('xpool validate help' lists them)");
		print_usage(ctx->err);
		return XP_EXIT_USAGE;
	}
	if (strcmp(a->argv[0], "help") == 0) {
		print_usage(ctx->out);
		return XP_EXIT_OK;
	}
	const struct sub *u = NULL;
	for (size_t i = 0; i < N_SUBS && !u; i++) {
		const struct sub *c = &subs[i];
		if (c->group ? strcmp(c->group, a->argv[0]) == 0 && a->argc > 1 && strcmp(c->name, a->argv[1]) == 0
			     : strcmp(c->name, a->argv[0]) == 0)
			u = c;
	}
	if (!u) {
		bool group = strcmp(a->argv[0], "case") == 0 || strcmp(a->argv[0], "env") == 0;
		if (group)
			xp_ctx_error(ctx, "validate %s: %s%s (try %s)", a->argv[0], a->argc > 1 ? "unknown subcommand " : "which subcommand?",
				     a->argc > 1 ? a->argv[1] : "",
				     a->argv[0][0] == 'c' ? "add, rm, show or list" : "declare or list");
		else
			xp_ctx_error(ctx, "validate: unknown subcommand %s ('xpool validate help' lists them)", a->argv[0]);
		return XP_EXIT_USAGE;
	}
	char words[32];
	int rc = xp_args_sub_check(ctx, a, &(struct xp_subuse){u->group, u->name, u->usage, u->opts, u->min, u->max},
				   words, sizeof words);
	if (rc)
		return rc;
	int skip = u->group ? 2 : 1, argc = a->argc - skip;
	if (ctx->json && xp_args_has(a, "csv")) {
		xp_ctx_error(ctx, "validate matrix: --json and --csv: choose one");
		return XP_EXIT_USAGE;
	}
	struct xp_err err = {{0}};
	/* Looking (matrix, list, show, history, export) opens the database read-only, or an
	 * empty one when there is none yet: it never creates or changes the file. */
	struct xp_store *s = u->writes ? xp_store_open(ctx->db, &err) : xp_store_for_reading(ctx->db, NULL, &err);
	if (!s) {
		xp_ctx_error(ctx, "validate %s: %s", words, err.msg);
		return XP_EXIT_ERROR;
	}
	/* The arguments after the words, NULL-terminated (export's FILE is optional). */
	char *rest[8] = {NULL};
	for (int i = 0; i < argc && i < 7; i++)
		rest[i] = a->argv[skip + i];
	rc = u->fn(ctx, a, rest, s);
	xp_store_close(s);
	return rc;
}

/* The forms for the dispatcher's --json rule (the table above runs them). */
static const struct xp_subcmd validate_subs[] = {
	{"matrix", true}, {"sync", false}, {"case add", false}, {"case rm", false}, {"case show", true},
	{"case list", true}, {"env declare", false}, {"env list", true}, {"record", false}, {"run", false},
	{"history", true}, {"import", false}, {"export", true}, {"help", false}, {NULL, false},
};
const struct xp_cmd_entry xp_cmd_validate_entry = {
	.name = "validate",
	.alias = NULL,
	.usage = "matrix|sync|case add|rm|show|list|env declare|list|record|run|history|import|export ARGS "
		 "('xpool validate help' shows each)",
	.summary = "the validation matrix: which environments are proven, layer by layer, for which workloads",
	.opts = validate_opts,
	.min_args = 0,
	.max_args = -1,
	.exec = validate_exec,
	.subs = validate_subs,
};
