/* cmd.h: the one command language. A table of commands serves CLI subcommands,
 * batch scripts (`xpool -b FILE`) and, later, the console's `:` prompt. */
#ifndef XP_CMD_H
#define XP_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "model.h"
#include "words.h"
#include "xp.h"

/* Most options one command may declare. */
#define XP_CMD_MAX_OPTS 40
/* Longest line a batch script may hold. */
#define XP_BATCH_MAX_LINE 65536

/* Settings shared by every command of one run: global options and the loaded cluster. */
struct xp_ctx {
	char *topology;    /* --topology FILE.xml */
	char *inventory;   /* --inventory FILE.json */
	char *replay;      /* --replay DIR: recorded vendor outputs instead of running tools */
	char *agents;      /* --agent URL (repeatable): the URLs, one a line */
	char *agents_file; /* --agents FILE */
	char *agent_token; /* --agent-token FILE */
	char *agent_ca;    /* --agent-ca FILE */
	double agent_timeout; /* --agent-timeout SECONDS, 0 for the default */
	char *slurm;       /* --slurm (""), --slurm-conf FILE: read the live Slurm; NULL for none */
	bool k8s;          /* --k8s: the Kubernetes cluster of the kubeconfig or the pod */
	char *k8s_server, *k8s_token, *k8s_ca; /* --k8s-server URL, --k8s-token-file F, --k8s-ca F */
	struct xp_agent_pool *agent_pool; /* the agents behind cluster, when it came from agents */
	char *db;          /* --db PATH */
	bool json;         /* --json */
	bool no_color;     /* --no-color (or NO_COLOR set) */
	bool quiet;        /* -q */
	int verbose;       /* -v, repeatable */
	FILE *out, *err;   /* where output and errors go */
	double delay;      /* --delay SECONDS: console refresh interval */
	bool ascii;        /* --ascii: ASCII glyphs even in a UTF-8 locale */
	char *theme;       /* --theme NAME|PATH */
	bool compare;      /* --compare: with --slurm, place and view 3 also ask Slurm (slurm_ask.h) */
	bool read_only;    /* --read-only: no command changes an engine's nodes (cmd_node.c) */
	char *ssh_command; /* --ssh-command 'ssh -t {node}': the console's `s`; NULL: $XPOOL_SSH, else ssh */
	const char *where; /* "script:LINE" while a batch line runs, else NULL */
	struct xp_cluster *cluster; /* loaded on first use, owned here */
	/* Set while the console runs: applies a theme at once (`:theme NAME`); NULL otherwise. */
	int (*ui_theme)(struct xp_ctx *ctx, const char *name_or_path, struct xp_err *err);
	void *ui;          /* the console behind ui_theme */
	unsigned touched;  /* global options set since xp_cmd_run began (bit = index in xp_global_opts) */
	struct xp_cluster *parked; /* the cluster of the base source while one command uses another */
	struct xp_agent_pool *parked_pool; /* and the agents behind it */
	bool used_cluster; /* the running command asked for the cluster (for exit status 4) */
	bool parked_set;   /* parked and parked_pool hold the base (which may be NULL: not loaded yet) */
	const char *argv0; /* how the program was started, for commands that explain themselves */
	/* Set while the console runs: changes its agent list (`:agent add|rm URL`); NULL otherwise. */
	int (*ui_agent)(struct xp_ctx *ctx, bool add, const char *url, struct xp_err *err);
	/* Set while the console runs: prints its agents' status as `agent ls` does; NULL otherwise. */
	int (*ui_agent_list)(struct xp_ctx *ctx, FILE *out);
	/* The placement index `place` built on cluster, kept for the next `place` (batch lines and
	 * prompt commands) until the cluster goes or changes; NULL when none (cmd_place.c). */
	struct xp_place_keep *place_keep;
	/* --view STRING: the view the console opens on ("topology --sort temp-"); NULL for none. */
	char *view;
	/* Set while the console runs: shows view name with options keys[i] = vals[i] (without dashes:
	 * "filter", "sort", ...) as `:view` asks; -1 with err set (unknown view or option). */
	int (*ui_view)(struct xp_ctx *ctx, const char *name, const char *const *keys, const char *const *vals,
		       size_t n, struct xp_err *err);
	/* Set while the console runs: writes the shown view's command string ("topology --sort
	 * temp-") into buf (`:bookmark save`). */
	void (*ui_view_string)(struct xp_ctx *ctx, char *buf, size_t len);
};

/* Default console refresh interval, seconds. */
#define XP_DEFAULT_DELAY 2.0

/* One option a command (or the global table) accepts. */
struct xp_opt {
	const char *name; /* long name without dashes: "json" */
	char short_name;  /* 'j', or 0 */
	const char *arg;  /* name of its argument ("FILE"), or NULL for a flag */
	const char *help; /* one line for `help COMMAND` */
	const char *(*value)(int i); /* the i-th value it takes, NULL past the last (prompt completion); NULL: any */
};

struct xp_cmd_entry;
struct xp_agent_pool;

/* One subcommand of a command: its words and whether it prints JSON under --json. */
struct xp_subcmd {
	const char *words; /* "info", or a group and a name: "case list" */
	bool json;         /* honours --json; the dispatcher refuses --json for the others */
};
struct xp_source_opts;

/* A parsed command line: option values by the position of the option in the entry's table. */
struct xp_args {
	const struct xp_cmd_entry *entry;
	bool set[XP_CMD_MAX_OPTS];
	const char *val[XP_CMD_MAX_OPTS];
	int argc;         /* positional arguments */
	char **argv;
	char *joined[XP_CMD_MAX_OPTS]; /* a list option ("ARG,..") given more than once: its values
					* joined by commas (val points here); owned */
};

/* One command. */
struct xp_cmd_entry {
	const char *name;    /* "inventory" */
	const char *alias;   /* "inv", or NULL */
	const char *usage;   /* "[--json] [NODE...]" */
	const char *summary; /* one line for `help` */
	const struct xp_opt *opts; /* terminated by an entry with name NULL; NULL for none */
	int min_args, max_args;    /* positional counts; max -1 for no limit */
	int (*exec)(struct xp_ctx *ctx, const struct xp_args *args); /* returns an exit code */
	bool stop_at_args; /* options end at the first positional (the program's own, before a command) */
	bool json;         /* the command without a subcommand prints JSON under --json */
	const struct xp_subcmd *subs; /* its subcommands, ended by {NULL}; NULL when it has none */
	/* The values its first positional takes where that is not a node name (prompt completion):
	 * fills *values (caller frees with xp_strv_free) and returns how many; NULL: node names. */
	size_t (*arg_values)(char ***values);
};

/* Every command, NULL-terminated, in the order `help` lists them. */
extern const struct xp_cmd_entry *const xp_cmd_table[];
/* Options accepted before the command and after it, by every command. */
extern const struct xp_opt xp_global_opts[];

/* Sets up a context writing to out/err, honouring NO_COLOR. */
void xp_ctx_init(struct xp_ctx *ctx, FILE *out, FILE *err);
/* Makes the global options applied so far the run's own (they outlast every command). */
void xp_ctx_settle(struct xp_ctx *ctx);
/* Fills so from the context's source options (the strings stay the context's). */
void xp_ctx_source(const struct xp_ctx *ctx, struct xp_source_opts *so);
/* Frees what the context owns. */
void xp_ctx_free(struct xp_ctx *ctx);
/* Prints "xpool: [where: ]message" to the context's error stream. */
void xp_ctx_error(struct xp_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the cluster (discovering or loading it on first use), or NULL after printing why. */
struct xp_cluster *xp_ctx_cluster(struct xp_ctx *ctx);
/* Drops the placement index kept for the context's cluster: call it before the cluster is
 * freed or replaced (the index points into it). */
void xp_ctx_place_drop(struct xp_ctx *ctx);
/* A refresh replaced the cluster old (at generation old_gen, maybe freed since: compared only)
 * with c, whose nodes differ from old's only at positions changed[0..n): the kept index
 * follows by indexing those nodes again (xp_place_index_update) when it was current for old,
 * else it is dropped (xp_ctx_place_drop). True when it followed. */
bool xp_ctx_place_follow(struct xp_ctx *ctx, const struct xp_cluster *old, uint64_t old_gen, struct xp_cluster *c,
			 const size_t *changed, size_t n);
/* Moves the cluster's generation on (views read the database again) after a console command,
 * whose only lasting change is in the database: the kept placement index goes along, since
 * what placement reads from the database (--validated evidence) it reads again every time. */
void xp_ctx_touch(struct xp_ctx *ctx);

/* Finds a command by name, alias or unique prefix; NULL with err set (unknown or ambiguous). */
const struct xp_cmd_entry *xp_cmd_find(const char *name, struct xp_err *err);
/* xp_cmd_find over another NULL-terminated table (tests use their own). */
const struct xp_cmd_entry *xp_cmd_find_in(const struct xp_cmd_entry *const *table, const char *name,
					  struct xp_err *err);
/* Applies a global option (by its table entry) to ctx; returns -1 with err set on a bad value. */
int xp_ctx_set_global(struct xp_ctx *ctx, const struct xp_opt *o, const char *val, struct xp_err *err);
/* Looks up a global option by long name (with its value inline after '=') or short letter. */
const struct xp_opt *xp_global_find(const char *name, char short_name);
/* Parses argv (argv[0] is the command name) into args; usage errors return -1 with err set. */
int xp_cmd_parse(struct xp_ctx *ctx, const struct xp_cmd_entry *e, int argc, char **argv,
		 struct xp_args *args, struct xp_err *err);
/* Frees what args owns (its argv and joined lists) and zeroes those. */
void xp_args_clear(struct xp_args *args);
/* True when option name was given. */
bool xp_args_has(const struct xp_args *a, const char *name);
/* One subcommand of a command with subcommand words (validate, queue): what its checks need. */
struct xp_subuse {
	const char *group, *name; /* "case", "add"; group NULL for one-word subcommands */
	const char *usage;        /* what follows the words */
	const char *opts;         /* the options that apply, each between spaces: " image model " */
	int min, max;             /* positional arguments after the words */
};
/* Writes u's words ("case add") into words; checks the count of positional arguments after
 * them and that only u's options were given. XP_EXIT_USAGE after saying what is wrong, else 0. */
int xp_args_sub_check(struct xp_ctx *ctx, const struct xp_args *a, const struct xp_subuse *u, char *words,
		      size_t len);
/* The value of option name, or NULL. */
const char *xp_args_get(const struct xp_args *a, const char *name);
/* Whether the command line argv (argc positionals after the command's name, as parsed) prints
 * JSON under --json: the subcommand's flag, else the command's. A subcommand the table does not
 * list does not (so that one added without its flag is refused, never quietly text). */
bool xp_cmd_speaks_json(const struct xp_cmd_entry *e, int argc, char *const *argv);
/* Finds, parses and runs one command (global options may stand before its name, as on the
 * command line); returns its exit code (2 for usage errors). */
int xp_cmd_run(struct xp_ctx *ctx, int argc, char **argv);
/* What xp_cmd_run does up to running the command, and no further (the fuzz harness of the
 * command line): 0 when it would run one, -1 with err set to the message it would print.
 * Global options the line gives are undone as after a run. */
int xp_cmd_check(struct xp_ctx *ctx, int argc, char **argv, struct xp_err *err);
/* Runs a batch script from f (named name in messages): one command a line, `#` comments.
 * Stops at the first failing line unless keep_going; returns the first non-zero exit code. */
int xp_batch_run(struct xp_ctx *ctx, FILE *f, const char *name, bool keep_going);
/* Prints a command's usage line ("usage: xpool NAME USAGE") to f. */
void xp_cmd_usage(const struct xp_cmd_entry *e, FILE *f);

#endif
