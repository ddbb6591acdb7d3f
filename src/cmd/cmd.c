/* cmd.c: command lookup, argument parsing and dispatch for the command table. */
#include "cmd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "agent_client.h"
#include "format.h"
#include "source.h"
#include "store.h"

#include <unistd.h>

extern const struct xp_cmd_entry xp_cmd_adapters_entry;
extern const struct xp_cmd_entry xp_cmd_agent_entry;
extern const struct xp_cmd_entry xp_cmd_audit_entry;
extern const struct xp_cmd_entry xp_cmd_baseline_entry;
extern const struct xp_cmd_entry xp_cmd_db_entry;
extern const struct xp_cmd_entry xp_cmd_health_entry;
extern const struct xp_cmd_entry xp_cmd_help_entry;
extern const struct xp_cmd_entry xp_cmd_place_entry;
extern const struct xp_cmd_entry xp_cmd_problem_entry;
extern const struct xp_cmd_entry xp_cmd_queue_entry;
extern const struct xp_cmd_entry xp_cmd_job_entry;
extern const struct xp_cmd_entry xp_cmd_node_entry;
extern const struct xp_cmd_entry xp_cmd_record_entry;
extern const struct xp_cmd_entry xp_cmd_sim_entry;
extern const struct xp_cmd_entry xp_cmd_inventory_entry;
extern const struct xp_cmd_entry xp_cmd_theme_entry;
extern const struct xp_cmd_entry xp_cmd_topo_entry;
extern const struct xp_cmd_entry xp_cmd_validate_entry;
extern const struct xp_cmd_entry xp_cmd_version_entry;
extern const struct xp_cmd_entry xp_cmd_view_entry;
extern const struct xp_cmd_entry xp_cmd_bookmark_entry;
extern const struct xp_cmd_entry xp_cmd_whatif_entry;

const struct xp_cmd_entry *const xp_cmd_table[] = {
	&xp_cmd_inventory_entry,
	&xp_cmd_topo_entry,
	&xp_cmd_health_entry,
	&xp_cmd_problem_entry,
	&xp_cmd_adapters_entry,
	&xp_cmd_record_entry,
	&xp_cmd_validate_entry,
	&xp_cmd_agent_entry,
	&xp_cmd_baseline_entry,
	&xp_cmd_audit_entry,
	&xp_cmd_db_entry,
	&xp_cmd_place_entry,
	&xp_cmd_queue_entry,
	&xp_cmd_job_entry,
	&xp_cmd_node_entry,
	&xp_cmd_sim_entry,
	&xp_cmd_whatif_entry,
	&xp_cmd_theme_entry,
	&xp_cmd_view_entry,
	&xp_cmd_bookmark_entry,
	&xp_cmd_help_entry,
	&xp_cmd_version_entry,
	NULL,
};

const struct xp_opt xp_global_opts[] = {
	{"topology", 0, "FILE", "load this hwloc XML topology instead of discovering the machine"},
	{"inventory", 0, "FILE", "load this cluster snapshot (inventory JSON) instead of discovering"},
	{"replay", 0, "DIR", "rehearse a node from recorded tool outputs (see 'xpool record')"},
	{"agent", 0, "URL", "read a node from the agent at URL (repeatable; see 'xpool agent')"},
	{"agents", 0, "FILE", "read nodes from the agents in FILE, one 'URL [TOKEN_FILE]' a line"},
	{"agent-token", 0, "FILE", "bearer token file for agents that name none of their own"},
	{"agent-ca", 0, "FILE", "trust the CA certificates in FILE for https agents"},
	{"agent-timeout", 0, "SECONDS", "give up on an agent after SECONDS (default 5)"},
	{"slurm", 0, NULL, "read the nodes from the live Slurm (its client configuration)"},
	{"slurm-conf", 0, "FILE", "read the nodes from the live Slurm that FILE configures (SLURM_CONF)"},
	{"k8s", 0, NULL, "read the Kubernetes cluster of the current kubeconfig context (or the pod's)"},
	{"k8s-server", 0, "URL", "read the Kubernetes cluster at the API server URL"},
	{"k8s-token-file", 0, "FILE", "bearer token file for the Kubernetes API server"},
	{"k8s-ca", 0, "FILE", "trust the CA certificates in FILE for the Kubernetes API server"},
	{"db", 0, "PATH", "use this database (default $XDG_STATE_HOME/xpool/xpool.db)"},
	{"json", 0, NULL, "print JSON instead of text"},
	{"no-color", 0, NULL, "never use colours (NO_COLOR in the environment does the same)"},
	{"delay", 'd', "SECONDS", "console: refresh the data every SECONDS (default 2)"},
	{"theme", 0, "NAME|PATH", "console: colour theme (see 'xpool theme')"},
	{"ascii", 0, NULL, "console: draw with ASCII only, even in a UTF-8 locale"},
	{"view", 0, "STRING", "console: open on this view ('topology --sort temp-'; see 'xpool help view')"},
	{"quiet", 'q', NULL, "print only errors"},
	{"verbose", 'v', NULL, "say more (repeat for more)"},
	{"compare", 0, NULL, "with --slurm: place --dry-run and the console's view 3 also ask Slurm (sbatch --test-only)"},
	{"read-only", 0, NULL, "change nothing in the engine: 'node drain|undrain' refuse, the console hides them"},
	{"ssh-command", 0, "CMD", "console: what 's' runs on a node, {node} replaced (default $XPOOL_SSH, else 'ssh {node}')"},
	{NULL, 0, NULL, NULL},
};
/* ctx->touched has a bit per global option. */
_Static_assert(sizeof xp_global_opts / sizeof xp_global_opts[0] - 1 <= 32, "more global options than touched has bits");

void xp_ctx_init(struct xp_ctx *ctx, FILE *out, FILE *err)
{
	memset(ctx, 0, sizeof *ctx);
	ctx->out = out;
	ctx->err = err;
	const char *nc = getenv("NO_COLOR");
	ctx->no_color = nc && *nc;
	ctx->delay = XP_DEFAULT_DELAY;
}

void xp_ctx_settle(struct xp_ctx *ctx)
{
	ctx->touched = 0;
	/* Nothing is loaded yet, so nothing waits aside: these options are the base source. */
	if (ctx->parked_set && !ctx->parked && !ctx->parked_pool)
		ctx->parked_set = false;
}

void xp_ctx_free(struct xp_ctx *ctx)
{
	free(ctx->topology);
	free(ctx->inventory);
	free(ctx->replay);
	free(ctx->agents);
	free(ctx->agents_file);
	free(ctx->agent_token);
	free(ctx->agent_ca);
	free(ctx->slurm);
	free(ctx->k8s_server);
	free(ctx->k8s_token);
	free(ctx->k8s_ca);
	xp_agent_pool_free(ctx->agent_pool);
	ctx->agent_pool = NULL;
	xp_ctx_place_drop(ctx);
	free(ctx->db);
	free(ctx->theme);
	free(ctx->view);
	free(ctx->ssh_command);
	xp_cluster_free(ctx->cluster);
	xp_cluster_free(ctx->parked);
	xp_agent_pool_free(ctx->parked_pool);
	ctx->cluster = NULL;
	ctx->parked = NULL;
	ctx->parked_pool = NULL;
}

void xp_ctx_error(struct xp_ctx *ctx, const char *fmt, ...)
{
	char msg[1536];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* Messages quote what users and files gave us: keep control bytes off the terminal. */
	xp_mask_controls(msg);
	if (ctx->where)
		fprintf(ctx->err, "xpool: %s: %s\n", ctx->where, msg);
	else
		fprintf(ctx->err, "xpool: %s\n", msg);
}

void xp_ctx_source(const struct xp_ctx *ctx, struct xp_source_opts *so)
{
	*so = (struct xp_source_opts){
		.topology = ctx->topology,
		.inventory = ctx->inventory,
		.replay = ctx->replay,
		.agents = ctx->agents,
		.agents_file = ctx->agents_file,
		.agent_token = ctx->agent_token,
		.agent_ca = ctx->agent_ca,
		.agent_timeout = ctx->agent_timeout,
		.slurm = ctx->slurm,
		.k8s = ctx->k8s,
		.k8s_server = ctx->k8s_server,
		.k8s_token_file = ctx->k8s_token,
		.k8s_ca = ctx->k8s_ca,
	};
}

/* The agents named, polled once; each that did not answer is named on the error stream (the
 * command's exit status turns 4, see exec_to). NULL after printing why on a bad agent list. */
static struct xp_agent_pool *poll_agents(struct xp_ctx *ctx, const struct xp_source_opts *so)
{
	struct xp_err err = {{0}};
	struct xp_agent_pool *p = xp_source_agent_pool(so, &err);
	if (!p) {
		xp_ctx_error(ctx, "%s", err.msg);
		return NULL;
	}
	xp_agent_pool_poll(p, true);
	for (size_t i = 0; i < xp_agent_pool_size(p); i++) {
		struct xp_agent_status st;
		xp_agent_pool_status(p, i, &st);
		if (!st.up)
			xp_ctx_error(ctx, "agent %s: %s", st.url, st.error ? st.error : "down");
	}
	return p;
}

struct xp_cluster *xp_ctx_cluster(struct xp_ctx *ctx)
{
	ctx->used_cluster = true;
	if (ctx->cluster)
		return ctx->cluster;
	struct xp_source_opts so;
	xp_ctx_source(ctx, &so);
	struct xp_agent_pool *pool = NULL;
	if (xp_source_has_agents(&so) && !(pool = poll_agents(ctx, &so)))
		return NULL;
	struct xp_err err = {{0}};
	char *path = ctx->db ? xp_strdup(ctx->db) : xp_store_default_path();
	ctx->cluster = xp_source_load_all(&so, path, pool, &err);
	free(path);
	if (!ctx->cluster) {
		xp_ctx_error(ctx, "%s", err.msg);
		xp_agent_pool_free(pool);
		return NULL;
	}
	xp_agent_pool_free(ctx->agent_pool);
	ctx->agent_pool = pool;
	return ctx->cluster;
}

const struct xp_cmd_entry *xp_cmd_find(const char *name, struct xp_err *err)
{
	return xp_cmd_find_in(xp_cmd_table, name, err);
}

const struct xp_cmd_entry *xp_cmd_find_in(const struct xp_cmd_entry *const *table, const char *name,
					  struct xp_err *err)
{
	const struct xp_cmd_entry *found = NULL;
	int n = 0;
	size_t len = strlen(name);
	if (!len) {
		xp_errf(err, "empty command name (try 'xpool help')");
		return NULL;
	}
	for (int i = 0; table[i]; i++) {
		const struct xp_cmd_entry *e = table[i];
		if (strcmp(e->name, name) == 0 || (e->alias && strcmp(e->alias, name) == 0))
			return e;
	}
	char cands[256] = "";
	for (int i = 0; table[i] && len; i++) {
		const struct xp_cmd_entry *e = table[i];
		if (strncmp(e->name, name, len) == 0) {
			found = e;
			n++;
			size_t used = strlen(cands);
			snprintf(cands + used, sizeof cands - used, "%s%s", used ? ", " : "", e->name);
		}
	}
	if (n == 1)
		return found;
	if (n > 1)
		xp_errf(err, "ambiguous command: %s, could be: %s", name, cands);
	else
		xp_errf(err, "unknown command: %s (try 'xpool help')", name);
	return NULL;
}

const struct xp_opt *xp_global_find(const char *name, char short_name)
{
	for (const struct xp_opt *o = xp_global_opts; o->name; o++)
		if ((name && strcmp(o->name, name) == 0) || (short_name && o->short_name == short_name))
			return o;
	return NULL;
}

/* A source option changes the cluster for one command: the base cluster (and the agents
 * behind it) wait aside until restore() puts them back. */
static void park(struct xp_ctx *ctx)
{
	xp_ctx_place_drop(ctx);
	if (!ctx->parked_set) {
		ctx->parked = ctx->cluster;
		ctx->parked_pool = ctx->agent_pool;
		ctx->parked_set = true;
	} else {
		xp_cluster_free(ctx->cluster);
		xp_agent_pool_free(ctx->agent_pool);
	}
	ctx->cluster = NULL;
	ctx->agent_pool = NULL;
}

static void unpark(struct xp_ctx *ctx)
{
	if (!ctx->parked_set)
		return;
	xp_ctx_place_drop(ctx);
	xp_cluster_free(ctx->cluster);
	xp_agent_pool_free(ctx->agent_pool);
	ctx->cluster = ctx->parked;
	ctx->agent_pool = ctx->parked_pool;
	ctx->parked = NULL;
	ctx->parked_pool = NULL;
	ctx->parked_set = false;
}

static void replace(char **slot, const char *v)
{
	free(*slot);
	*slot = xp_strdup(v);
}

int xp_ctx_set_global(struct xp_ctx *ctx, const struct xp_opt *o, const char *val, struct xp_err *err)
{
	if (o->arg && (!val || !*val))
		return xp_errf(err, "option --%s needs a %s", o->name, o->arg);
	ctx->touched |= 1u << (o - xp_global_opts);
	if (strcmp(o->name, "topology") == 0 || strcmp(o->name, "inventory") == 0 ||
	    strcmp(o->name, "replay") == 0) {
		/* A different source means a different cluster. Keep the base source's
		 * cluster aside: the option lasts one command (see xp_cmd_run). */
		replace(o->name[0] == 't' ? &ctx->topology : o->name[0] == 'i' ? &ctx->inventory : &ctx->replay, val);
		park(ctx);
	} else if (strncmp(o->name, "agent", 5) == 0) {
		if (strcmp(o->name, "agent") == 0) {
			if (xp_agent_url_check(val, err) < 0)
				return -1;
			char *v = ctx->agents ? xp_asprintf("%s\n%s", ctx->agents, val) : xp_strdup(val);
			free(ctx->agents);
			ctx->agents = v;
		} else if (strcmp(o->name, "agent-timeout") == 0) {
			char *end;
			double d = strtod(val, &end);
			if (end == val || *end || !(d >= 0.05 && d <= 3600))
				return xp_errf(err, "option --agent-timeout: '%s' is not a number of seconds from 0.05 to 3600", val);
			ctx->agent_timeout = d;
		} else
			replace(strcmp(o->name, "agents") == 0 ? &ctx->agents_file
				: strcmp(o->name, "agent-token") == 0 ? &ctx->agent_token : &ctx->agent_ca, val);
		/* Other agents are another cluster, as with --inventory. */
		park(ctx);
	} else if (strncmp(o->name, "slurm", 5) == 0) {
		/* The live Slurm is another cluster, as with --inventory. */
		replace(&ctx->slurm, o->name[5] ? val : "");
		park(ctx);
	} else if (strncmp(o->name, "k8s", 3) == 0) {
		if (strcmp(o->name, "k8s") == 0)
			ctx->k8s = true;
		else
			replace(strcmp(o->name, "k8s-server") == 0 ? &ctx->k8s_server
				: strcmp(o->name, "k8s-token-file") == 0 ? &ctx->k8s_token : &ctx->k8s_ca, val);
		/* Another engine's cluster, as with --inventory. */
		park(ctx);
	} else if (strcmp(o->name, "db") == 0)
		replace(&ctx->db, val);
	else if (strcmp(o->name, "theme") == 0)
		replace(&ctx->theme, val);
	else if (strcmp(o->name, "view") == 0)
		replace(&ctx->view, val);
	else if (strcmp(o->name, "delay") == 0) {
		char *end;
		double d = strtod(val, &end);
		/* A tenth of a second keeps the console responsive; a day is plenty. */
		if (end == val || *end || !(d >= 0.1 && d <= 86400))
			return xp_errf(err, "option --delay: '%s' is not a number of seconds from 0.1 to 86400", val);
		ctx->delay = d;
	} else if (strcmp(o->name, "ascii") == 0)
		ctx->ascii = true;
	else if (strcmp(o->name, "json") == 0)
		ctx->json = true;
	else if (strcmp(o->name, "no-color") == 0)
		ctx->no_color = true;
	else if (strcmp(o->name, "quiet") == 0)
		ctx->quiet = true;
	else if (strcmp(o->name, "verbose") == 0)
		ctx->verbose++;
	else if (strcmp(o->name, "compare") == 0)
		ctx->compare = true;
	else if (strcmp(o->name, "read-only") == 0)
		ctx->read_only = true;
	else if (strcmp(o->name, "ssh-command") == 0)
		replace(&ctx->ssh_command, val);
	return 0;
}

static int opt_index(const struct xp_cmd_entry *e, const char *name, char short_name)
{
	/* xp_args has room for XP_CMD_MAX_OPTS; a longer table is a bug the cmd tests catch. */
	for (int i = 0; e->opts && e->opts[i].name && i < XP_CMD_MAX_OPTS; i++)
		if ((name && strcmp(e->opts[i].name, name) == 0) ||
		    (short_name && e->opts[i].short_name == short_name))
			return i;
	return -1;
}

/* "NAME: " before a command's parse errors; nothing for the program's own options. */
static const char *pfx(const struct xp_cmd_entry *e)
{
	static char buf[80];
	if (e->stop_at_args)
		return "";
	snprintf(buf, sizeof buf, "%s: ", e->name);
	return buf;
}

/* Applies one option: the command's own first, then the global table.
 * *used tells whether the following word was taken as its value. */
static int apply_opt(struct xp_ctx *ctx, const struct xp_cmd_entry *e, struct xp_args *a,
		     const char *name, char sname, const char *inline_val, const char *next,
		     bool *used, struct xp_err *err)
{
	char shown[64];
	if (name)
		snprintf(shown, sizeof shown, "--%s", name);
	else
		snprintf(shown, sizeof shown, "-%c", sname);
	int i = opt_index(e, name, sname);
	const struct xp_opt *o = i >= 0 ? &e->opts[i] : xp_global_find(name, sname);
	if (!o)
		return xp_errf(err, "%sunknown option %s", pfx(e), shown);
	const char *val = NULL;
	if (o->arg) {
		if (inline_val)
			val = inline_val;
		else if (next) {
			val = next;
			*used = true;
		} else
			return xp_errf(err, "%soption %s needs a %s", pfx(e), shown, o->arg);
		if (!*val)
			return xp_errf(err, "%soption %s needs a %s, not an empty string", pfx(e), shown, o->arg);
	} else if (inline_val)
		return xp_errf(err, "%soption %s takes no value", pfx(e), shown);
	if (i < 0)
		return xp_ctx_set_global(ctx, o, val, err);
	if (a->set[i] && o->arg) {
		/* Given again: a list option (its argument has a comma: "NODE,..", "K=V[,K=V]") takes
		 * both, as `--drain a --drain b` means; any other would keep only the last, silently,
		 * so it is refused. */
		if (!strchr(o->arg, ',')) {
			if (strcmp(a->val[i], val) == 0)
				return 0;
			return xp_errf(err, "%soption %s given twice (%s, then %s): give it once", pfx(e), shown,
				       a->val[i], val);
		}
		char *j = xp_asprintf("%s,%s", a->val[i], val);
		free(a->joined[i]);
		a->joined[i] = j;
		a->val[i] = j;
		return 0;
	}
	a->set[i] = true;
	a->val[i] = val;
	return 0;
}

void xp_args_clear(struct xp_args *a)
{
	free(a->argv);
	a->argv = NULL;
	for (size_t i = 0; i < XP_CMD_MAX_OPTS; i++) {
		free(a->joined[i]);
		a->joined[i] = NULL;
	}
}

int xp_cmd_parse(struct xp_ctx *ctx, const struct xp_cmd_entry *e, int argc, char **argv,
		 struct xp_args *a, struct xp_err *err)
{
	memset(a, 0, sizeof *a);
	a->entry = e;
	a->argv = xp_calloc((size_t)argc + 1, sizeof *a->argv);
	bool only_args = false;
	for (int i = 1; i < argc; i++) {
		char *w = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		bool used = false;
		int rc = 0;
		if (only_args || w[0] != '-' || w[1] == '\0') {
			a->argv[a->argc++] = w;
			/* The program's own options end where the command begins. */
			if (e->stop_at_args)
				only_args = true;
			continue;
		}
		if (strcmp(w, "--") == 0) {
			only_args = true;
			continue;
		}
		if (w[1] == '-') {
			char name[64];
			const char *eq = strchr(w + 2, '=');
			size_t len = eq ? (size_t)(eq - (w + 2)) : strlen(w + 2);
			if (len >= sizeof name) {
				xp_args_clear(a);
				return xp_errf(err, "%sunknown option %.40s...", pfx(e), w);
			}
			memcpy(name, w + 2, len);
			name[len] = '\0';
			rc = apply_opt(ctx, e, a, name, 0, eq ? eq + 1 : NULL, next, &used, err);
		} else {
			/* A cluster of short options: -qv; one taking a value ends the cluster. */
			for (const char *c = w + 1; *c; c++) {
				int k = opt_index(e, NULL, *c);
				const struct xp_opt *o = k >= 0 ? &e->opts[k] : xp_global_find(NULL, *c);
				bool takes = o && o->arg;
				rc = apply_opt(ctx, e, a, NULL, *c, takes && c[1] ? c + 1 : NULL,
					       takes ? next : NULL, &used, err);
				if (rc < 0 || takes)
					break;
			}
		}
		if (rc < 0) {
			xp_args_clear(a);
			return -1;
		}
		if (used)
			i++;
	}
	if (a->argc < e->min_args || (e->max_args >= 0 && a->argc > e->max_args)) {
		xp_args_clear(a);
		return xp_errf(err, "%s: wrong number of arguments; usage: xpool %s %s", e->name, e->name,
			       e->usage);
	}
	return 0;
}

bool xp_args_has(const struct xp_args *a, const char *name)
{
	int i = opt_index(a->entry, name, 0);
	return i >= 0 && a->set[i];
}

int xp_args_sub_check(struct xp_ctx *ctx, const struct xp_args *a, const struct xp_subuse *u, char *words,
		      size_t len)
{
	const char *cmd = a->entry->name;
	snprintf(words, len, "%s%s%s", u->group ? u->group : "", u->group ? " " : "", u->name);
	int argc = a->argc - (u->group ? 2 : 1);
	if (argc < u->min || argc > u->max) {
		xp_ctx_error(ctx, "%s %s: wrong number of arguments; usage: xpool %s %s %s", cmd, words, cmd, words,
			     u->usage);
		return XP_EXIT_USAGE;
	}
	for (int i = 0; a->entry->opts && a->entry->opts[i].name; i++) {
		char key[40];
		snprintf(key, sizeof key, " %s ", a->entry->opts[i].name);
		if (a->set[i] && !strstr(u->opts, key)) {
			xp_ctx_error(ctx, "%s %s: option --%s does not apply; usage: xpool %s %s %s", cmd, words,
				     a->entry->opts[i].name, cmd, words, u->usage);
			return XP_EXIT_USAGE;
		}
	}
	return 0;
}

const char *xp_args_get(const struct xp_args *a, const char *name)
{
	int i = opt_index(a->entry, name, 0);
	return i >= 0 && a->set[i] ? a->val[i] : NULL;
}

void xp_cmd_usage(const struct xp_cmd_entry *e, FILE *f)
{
	fprintf(f, "usage: xpool %s %s\n", e->name, e->usage);
}

/* The global settings as they were before a command, to put back after it. */
struct saved {
	char *topology, *inventory, *replay, *db, *theme;
	char *agents, *agents_file, *agent_token, *agent_ca;
	char *slurm;
	double agent_timeout;
	bool k8s;
	char *k8s_server, *k8s_token, *k8s_ca;
	bool json, no_color, quiet, ascii;
	int verbose;
	double delay;
	bool compare;
	bool read_only;
	char *ssh_command;
};

static void save(const struct xp_ctx *ctx, struct saved *s)
{
	s->topology = xp_strdup(ctx->topology);
	s->inventory = xp_strdup(ctx->inventory);
	s->replay = xp_strdup(ctx->replay);
	s->agents = xp_strdup(ctx->agents);
	s->agents_file = xp_strdup(ctx->agents_file);
	s->agent_token = xp_strdup(ctx->agent_token);
	s->agent_ca = xp_strdup(ctx->agent_ca);
	s->slurm = xp_strdup(ctx->slurm);
	s->agent_timeout = ctx->agent_timeout;
	s->k8s = ctx->k8s;
	s->k8s_server = xp_strdup(ctx->k8s_server);
	s->k8s_token = xp_strdup(ctx->k8s_token);
	s->k8s_ca = xp_strdup(ctx->k8s_ca);
	s->db = xp_strdup(ctx->db);
	s->theme = xp_strdup(ctx->theme);
	s->json = ctx->json;
	s->no_color = ctx->no_color;
	s->quiet = ctx->quiet;
	s->ascii = ctx->ascii;
	s->verbose = ctx->verbose;
	s->delay = ctx->delay;
	s->compare = ctx->compare;
	s->read_only = ctx->read_only;
	s->ssh_command = xp_strdup(ctx->ssh_command);
}

static void put_back(char **slot, char **saved)
{
	free(*slot);
	*slot = *saved;
	*saved = NULL;
}

/* Undoes the global options one command line gave, so that `inventory --json` on
 * one batch line or at the prompt does not change the lines after it. */
static void restore(struct xp_ctx *ctx, struct saved *s)
{
	bool source = false, slurm_back = false;
	for (int i = 0; xp_global_opts[i].name; i++) {
		if (!(ctx->touched & (1u << i)))
			continue;
		const char *n = xp_global_opts[i].name;
		source |= strcmp(n, "topology") == 0 || strcmp(n, "inventory") == 0 || strcmp(n, "replay") == 0 ||
			  strncmp(n, "agent", 5) == 0 || strncmp(n, "slurm", 5) == 0 || strncmp(n, "k8s", 3) == 0;
		if (strcmp(n, "topology") == 0 || strcmp(n, "inventory") == 0 || strcmp(n, "replay") == 0) {
			put_back(n[0] == 't' ? &ctx->topology : n[0] == 'i' ? &ctx->inventory : &ctx->replay,
				 n[0] == 't' ? &s->topology : n[0] == 'i' ? &s->inventory : &s->replay);
		} else if (strcmp(n, "agent") == 0)
			put_back(&ctx->agents, &s->agents);
		else if (strcmp(n, "agents") == 0)
			put_back(&ctx->agents_file, &s->agents_file);
		else if (strcmp(n, "agent-token") == 0)
			put_back(&ctx->agent_token, &s->agent_token);
		else if (strcmp(n, "agent-ca") == 0)
			put_back(&ctx->agent_ca, &s->agent_ca);
		else if (strcmp(n, "agent-timeout") == 0)
			ctx->agent_timeout = s->agent_timeout;
		else if (strncmp(n, "slurm", 5) == 0 && !slurm_back) {
			/* --slurm and --slurm-conf share one setting: put it back once. */
			put_back(&ctx->slurm, &s->slurm);
			slurm_back = true;
		}
		else if (strcmp(n, "k8s") == 0)
			ctx->k8s = s->k8s;
		else if (strcmp(n, "k8s-server") == 0)
			put_back(&ctx->k8s_server, &s->k8s_server);
		else if (strcmp(n, "k8s-token-file") == 0)
			put_back(&ctx->k8s_token, &s->k8s_token);
		else if (strcmp(n, "k8s-ca") == 0)
			put_back(&ctx->k8s_ca, &s->k8s_ca);
		else if (strcmp(n, "db") == 0)
			put_back(&ctx->db, &s->db);
		else if (strcmp(n, "theme") == 0)
			put_back(&ctx->theme, &s->theme);
		else if (strcmp(n, "json") == 0)
			ctx->json = s->json;
		else if (strcmp(n, "no-color") == 0)
			ctx->no_color = s->no_color;
		else if (strcmp(n, "quiet") == 0)
			ctx->quiet = s->quiet;
		else if (strcmp(n, "ascii") == 0)
			ctx->ascii = s->ascii;
		else if (strcmp(n, "verbose") == 0)
			ctx->verbose = s->verbose;
		else if (strcmp(n, "delay") == 0)
			ctx->delay = s->delay;
		else if (strcmp(n, "read-only") == 0)
			ctx->read_only = s->read_only;
		else if (strcmp(n, "ssh-command") == 0)
			put_back(&ctx->ssh_command, &s->ssh_command);
		else if (strcmp(n, "compare") == 0)
			ctx->compare = s->compare;
	}
	/* Once, after every option is back: two source options on one line park once. */
	if (source)
		unpark(ctx);
	free(s->topology);
	free(s->inventory);
	free(s->replay);
	free(s->agents);
	free(s->agents_file);
	free(s->agent_token);
	free(s->agent_ca);
	free(s->slurm);
	free(s->k8s_server);
	free(s->k8s_token);
	free(s->k8s_ca);
	free(s->db);
	free(s->theme);
	free(s->ssh_command);
}

/* Runs e with its output going to out (or nowhere with -q); reports a failed write. */
static int exec_to(struct xp_ctx *ctx, const struct xp_cmd_entry *e, const struct xp_args *args)
{
	FILE *out = ctx->out;
	FILE *sink = NULL;
	if (ctx->quiet && (sink = fopen("/dev/null", "we")) != NULL)
		ctx->out = sink;
	ctx->used_cluster = false;
	int rc = e->exec(ctx, args);
	/* Partial data is an answer a script must be able to tell from a whole one; the console
	 * shows which agents are down itself. */
	if (rc == XP_EXIT_OK && ctx->used_cluster && ctx->cluster && ctx->cluster->sources_down && !ctx->ui_agent)
		rc = XP_EXIT_PARTIAL;
	errno = 0;
	bool bad = fflush(ctx->out) != 0 || ferror(ctx->out);
	int saved_errno = errno;
	ctx->out = out;
	if (sink)
		fclose(sink);
	if (bad) {
		/* A full disk or a closed pipe must not look like success to a script. */
		xp_ctx_error(ctx, "%s: writing output: %s", e->name,
			     saved_errno ? strerror(saved_errno) : "write error");
		if (rc == XP_EXIT_OK)
			rc = XP_EXIT_ERROR;
	}
	return rc;
}

/* The subcommand argv names (argc positionals after the command's name), or NULL. */
static const struct xp_subcmd *find_sub(const struct xp_cmd_entry *e, int argc, char *const *argv)
{
	for (const struct xp_subcmd *u = e->subs; u && argc > 0 && u->words; u++) {
		const char *sp = strchr(u->words, ' ');
		size_t len = sp ? (size_t)(sp - u->words) : strlen(u->words);
		if (strncmp(u->words, argv[0], len) == 0 && argv[0][len] == '\0' &&
		    (!sp || (argc > 1 && strcmp(sp + 1, argv[1]) == 0)))
			return u;
	}
	return NULL;
}

bool xp_cmd_speaks_json(const struct xp_cmd_entry *e, int argc, char *const *argv)
{
	if (!e->subs || argc == 0)
		return e->json;
	const struct xp_subcmd *u = find_sub(e, argc, argv);
	/* A form the table does not list (a typo, or a subcommand added without its flag) is
	 * refused: --json must never be ignored quietly. */
	return u && u->json;
}

/* The program's global options before a command name on a batch or prompt line, parsed as on
 * the command line (main.c parses them with its own entry, which adds -b and --help). */
static const struct xp_cmd_entry lead_entry = {
	.name = "xpool",
	.usage = "[GLOBAL OPTIONS] COMMAND [ARGS]",
	.summary = "global options before a command",
	.min_args = 0,
	.max_args = -1,
	.stop_at_args = true,
};

/* True when --help stands among a command's own words (not after "--" or where its arguments
 * are another command's, as batch's and agent's are). */
static bool asks_help(const struct xp_cmd_entry *e, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0 || (e->stop_at_args && argv[i][0] != '-'))
			return false;
		if (strcmp(argv[i], "--help") == 0)
			return true;
	}
	return false;
}

/* Everything xp_cmd_run does before running a command: the global options in front of it,
 * the command's name, its options and arguments, --json against what it prints. Sets *ep and
 * fills *args (cleared by the caller, as *lead, whose argv args may point into), or sets *help
 * when the line asks for the command's help (args then untouched). -1 with err set: the
 * message xp_cmd_run prints. Runs nothing and reads no file. */
static int prepare(struct xp_ctx *ctx, int argc, char **argv, struct xp_args *lead, const struct xp_cmd_entry **ep,
		   struct xp_args *args, bool *help, struct xp_err *err)
{
	const struct xp_cmd_entry *e = NULL;
	*ep = NULL;
	*help = false;
	if (argv[0][0] == '-' && argv[0][1]) {
		/* `--inventory F inventory`: the options last for this command, as those after it. */
		char **v = xp_calloc((size_t)argc + 2, sizeof *v);
		v[0] = (char *)lead_entry.name;
		memcpy(v + 1, argv, (size_t)argc * sizeof *v);
		int rc = xp_cmd_parse(ctx, &lead_entry, argc + 1, v, lead, err);
		free(v);
		if (rc < 0) {
			char m[sizeof err->msg];
			snprintf(m, sizeof m, "%s", err->msg);
			return xp_errf(err, "%s (try 'xpool help')", m);
		}
		if (lead->argc == 0)
			return xp_errf(err, "options but no command (try 'xpool help')");
		argc = lead->argc;
		argv = lead->argv;
	}
	if (!(e = xp_cmd_find(argv[0], err)))
		return -1;
	*ep = e;
	if (asks_help(e, argc, argv)) {
		*help = true;
		return 0;
	}
	if (xp_cmd_parse(ctx, e, argc, argv, args, err) < 0)
		return -1;
	if (ctx->json && !xp_cmd_speaks_json(e, args->argc, args->argv)) {
		/* Text where a script asked for JSON would break the script later, and quietly. */
		const struct xp_subcmd *u = e->subs ? find_sub(e, args->argc, args->argv) : NULL;
		if (e->subs && args->argc && !u)
			xp_errf(err, "%s %s: --json: not a subcommand that prints JSON (leave --json out)", e->name,
				args->argv[0]);
		else
			xp_errf(err, "%s%s%s: --json: this command prints no JSON (leave --json out)", e->name,
				u ? " " : "", u ? u->words : "");
		xp_args_clear(args);
		return -1;
	}
	return 0;
}

int xp_cmd_run(struct xp_ctx *ctx, int argc, char **argv)
{
	struct xp_err err = {{0}};
	if (argc < 1)
		return XP_EXIT_OK;
	struct saved s;
	save(ctx, &s);
	unsigned outer = ctx->touched;
	ctx->touched = 0;
	struct xp_args lead = {0};
	struct xp_args args;
	const struct xp_cmd_entry *e;
	bool help;
	int rc = XP_EXIT_USAGE;
	if (prepare(ctx, argc, argv, &lead, &e, &args, &help, &err) < 0) {
		xp_ctx_error(ctx, "%s", err.msg);
	} else if (help) {
		/* `xpool place --help`, as every other tool takes it: the command's help. */
		char *h[] = {"help", (char *)e->name, NULL};
		rc = xp_cmd_run(ctx, strcmp(e->name, "help") == 0 ? 1 : 2, h);
	} else {
		rc = exec_to(ctx, e, &args);
		xp_args_clear(&args);
	}
	xp_args_clear(&lead);
	restore(ctx, &s);
	ctx->touched = outer;
	return rc;
}

int xp_cmd_check(struct xp_ctx *ctx, int argc, char **argv, struct xp_err *err)
{
	if (argc < 1)
		return 0;
	struct saved s;
	save(ctx, &s);
	unsigned outer = ctx->touched;
	ctx->touched = 0;
	struct xp_args lead = {0};
	struct xp_args args;
	const struct xp_cmd_entry *e;
	bool help;
	int rc = prepare(ctx, argc, argv, &lead, &e, &args, &help, err);
	if (rc == 0 && !help)
		xp_args_clear(&args);
	xp_args_clear(&lead);
	restore(ctx, &s);
	ctx->touched = outer;
	return rc;
}
