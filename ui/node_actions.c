/* node_actions.c: tagging nodes and draining or cordoning them from view 1. */
#include "node_actions.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "format.h"
#include "line_edit.h"
#include "node_access.h"
#include "node_ssh.h"
#include "theme_file.h"

enum ask { ASK_NONE, ASK_REASON, ASK_CONFIRM };

struct xp_nact {
	char **tags;            /* tagged node names, in the order tagged */
	size_t n_tags, cap_tags;
	/* the write-access check, on a thread: the engine may take seconds to answer */
	pthread_t thread;
	bool started;
	atomic_int access;      /* -1: not known yet, 0: read-only, 1: may change nodes */
	char why[512];          /* why read-only (written by the thread before access is set) */
	char *slurm, *k8s_server, *k8s_token, *k8s_ca; /* the source, copied for the thread */
	bool k8s, read_only;
	const char *engine;     /* "slurm", "k8s", NULL */
	/* the question being asked */
	int ask;
	bool drain;
	char **targets;         /* the nodes it is about */
	size_t n_targets;
	struct xp_ledit reason;
	char text[6144];        /* the question's line */
	struct xp_view_key keys[40];
};

static void *check_main(void *arg)
{
	struct xp_nact *a = arg;
	struct xp_source_opts so = {.slurm = a->slurm,
				    .k8s = a->k8s,
				    .k8s_server = a->k8s_server,
				    .k8s_token_file = a->k8s_token,
				    .k8s_ca = a->k8s_ca};
	int ok = xp_node_access(&so, a->read_only, a->why, sizeof a->why);
	atomic_store(&a->access, ok);
	return NULL;
}

struct xp_nact *xp_nact_new(struct xp_ui *ui)
{
	struct xp_nact *a = xp_calloc(1, sizeof *a);
	atomic_init(&a->access, -1);
	const struct xp_ctx *ctx = xp_ui_ctx(ui);
	struct xp_source_opts so;
	xp_ctx_source(ctx, &so);
	a->slurm = xp_strdup(so.slurm);
	a->k8s = so.k8s;
	a->k8s_server = xp_strdup(so.k8s_server);
	a->k8s_token = xp_strdup(so.k8s_token_file);
	a->k8s_ca = xp_strdup(so.k8s_ca);
	a->read_only = ctx->read_only;
	a->engine = xp_node_engine(&so);
	if (!a->engine || a->read_only) {
		/* Nothing to ask an engine: known at once. */
		check_main(a);
	} else if (pthread_create(&a->thread, NULL, check_main, a) == 0)
		a->started = true;
	else {
		snprintf(a->why, sizeof a->why, "read-only: cannot start the write-access check");
		atomic_store(&a->access, 0);
	}
	return a;
}

static void targets_clear(struct xp_nact *a)
{
	xp_strv_free(a->targets, a->n_targets);
	a->targets = NULL;
	a->n_targets = 0;
}

void xp_nact_free(struct xp_nact *a)
{
	if (!a)
		return;
	if (a->started)
		pthread_join(a->thread, NULL);
	for (size_t i = 0; i < a->n_tags; i++)
		free(a->tags[i]);
	free(a->tags);
	targets_clear(a);
	free(a->slurm);
	free(a->k8s_server);
	free(a->k8s_token);
	free(a->k8s_ca);
	free(a);
}

static long tag_index(const struct xp_nact *a, const char *name)
{
	for (size_t i = 0; name && i < a->n_tags; i++)
		if (strcmp(a->tags[i], name) == 0)
			return (long)i;
	return -1;
}

bool xp_nact_tagged(const struct xp_nact *a, const char *name)
{
	return a && a->n_tags && tag_index(a, name) >= 0;
}

size_t xp_nact_count(const struct xp_nact *a)
{
	return a ? a->n_tags : 0;
}

/* 1 may change nodes; 0 read-only (message said); -1 still checking (message said). */
static int may(struct xp_nact *a, struct xp_ui *ui)
{
	int ok = atomic_load(&a->access);
	if (ok < 0)
		xp_ui_message(ui, XP_ROLE_DIM, "still asking %s whether this user may change nodes", a->engine);
	else if (!ok)
		xp_ui_message(ui, XP_ROLE_WARN, "%s", a->why);
	return ok;
}

/* The nodes of the list as "a, b, c" cut to fit the question ("and 12 more"). */
static void names_text(char *const *v, size_t n, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t need = strlen(v[i]) + 2;
		if (at + need + 24 >= len || (i >= 8 && n > 9)) {
			snprintf(buf + at, len - at, " and %zu more", n - i);
			return;
		}
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", v[i]);
	}
}

static void set_question(struct xp_nact *a)
{
	char names[600];
	names_text(a->targets, a->n_targets, names, sizeof names);
	bool k = a->engine && a->engine[0] == 'k';
	const char *verb = a->drain ? (k ? "Cordon" : "Drain") : (k ? "Uncordon" : "Undrain");
	if (a->ask == ASK_REASON)
		snprintf(a->text, sizeof a->text, "%s %s: reason%s (Enter, Esc cancels): ", verb, names,
			 k ? "" : " (Slurm requires one)");
	else if (a->drain)
		snprintf(a->text, sizeof a->text, "%s %zu node%s %s (reason \"%s\")? y/N", verb, a->n_targets,
			 a->n_targets == 1 ? "" : "s", names, a->reason.text);
	else
		snprintf(a->text, sizeof a->text, "%s %zu node%s %s? y/N", verb, a->n_targets, a->n_targets == 1 ? "" : "s",
			 names);
	xp_mask_controls(a->text);
}

/* d or u: the tagged nodes, else the one under the cursor. */
static int start(struct xp_nact *a, struct xp_ui *ui, bool drain, const char *node)
{
	if (may(a, ui) != 1)
		return XP_REACT_REDRAW;
	targets_clear(a);
	if (a->n_tags)
		for (size_t i = 0; i < a->n_tags; i++)
			xp_strv_add(&a->targets, &a->n_targets, a->tags[i]);
	else if (node)
		xp_strv_add(&a->targets, &a->n_targets, node);
	else {
		xp_ui_message(ui, XP_ROLE_DIM, "no node under the cursor");
		return XP_REACT_REDRAW;
	}
	a->drain = drain;
	xp_ledit_start(&a->reason, NULL);
	a->ask = drain ? ASK_REASON : ASK_CONFIRM;
	set_question(a);
	return XP_REACT_REDRAW;
}

/* Appends s to line (at *len) as one word of the command language: every byte but letters,
 * digits and UTF-8 behind a backslash, so no quote, blank or '#' in it splits or ends it. */
static void add_word(char *line, size_t *len, const char *s)
{
	line[(*len)++] = ' ';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p >= 0x80))
			line[(*len)++] = '\\';
		line[(*len)++] = (char)*p;
	}
	line[*len] = '\0';
}

/* y: `node drain|undrain NODES [--reason R]` through the command table. */
static int act(struct xp_nact *a, struct xp_ui *ui)
{
	size_t need = 32 + 2 * strlen(a->reason.text) + 12;
	for (size_t i = 0; i < a->n_targets; i++)
		need += 2 * strlen(a->targets[i]) + 1;
	char *line = xp_malloc(need);
	size_t len = (size_t)snprintf(line, need, "node %s", a->drain ? "drain" : "undrain");
	for (size_t i = 0; i < a->n_targets; i++)
		add_word(line, &len, a->targets[i]);
	if (a->drain && a->reason.len) {
		add_word(line, &len, "--reason");
		add_word(line, &len, a->reason.text);
	}
	char *out, *errs;
	int rc = xp_ui_command(ui, line, &out, &errs);
	free(line);
	bool k = a->engine && a->engine[0] == 'k';
	const char *done = a->drain ? (k ? "cordoned" : "drained") : (k ? "uncordoned" : "undrained");
	if (rc == XP_EXIT_OK) {
		char names[600];
		names_text(a->targets, a->n_targets, names, sizeof names);
		xp_ui_message(ui, XP_ROLE_OK, "%s %s", done, names);
		/* Done with: the tags were for this action. */
		for (size_t i = 0; i < a->n_tags; i++)
			free(a->tags[i]);
		a->n_tags = 0;
	} else {
		/* The first failure, with how many of the others went through. */
		size_t okn = 0;
		for (const char *p = out; (p = strstr(p, ": ")) != NULL; p++)
			okn++;
		const char *e = strncmp(errs, "xpool: ", 7) == 0 ? errs + 7 : errs;
		xp_ui_message(ui, XP_ROLE_FAIL, "%.*s (exit %d; %zu of %zu %s)", (int)strcspn(e, "\n"),
			      *e ? e : "failed", rc, okn, a->n_targets, done);
	}
	free(out);
	free(errs);
	a->ask = ASK_NONE;
	targets_clear(a);
	/* The engine's new state shows at once: the map reads it again now. */
	return XP_REACT_REDRAW | XP_REACT_REFRESH;
}

int xp_nact_pre_key(struct xp_nact *a, struct xp_ui *ui, int key)
{
	if (!a || a->ask == ASK_NONE)
		return XP_REACT_UNHANDLED;
	if (a->ask == ASK_CONFIRM) {
		a->ask = ASK_NONE;
		if (key == 'y' || key == 'Y')
			return act(a, ui);
		targets_clear(a);
		xp_ui_message(ui, XP_ROLE_DIM, "not done");
		return XP_REACT_REDRAW;
	}
	switch (xp_ledit_key(&a->reason, key)) {
	case XP_LEDIT_CANCEL:
		a->ask = ASK_NONE;
		targets_clear(a);
		xp_ui_message(ui, XP_ROLE_DIM, "not done");
		break;
	case XP_LEDIT_DONE:
		if (!a->reason.len && !(a->engine && a->engine[0] == 'k')) {
			xp_ui_message(ui, XP_ROLE_WARN, "Slurm requires a reason to drain");
			break;
		}
		a->ask = ASK_CONFIRM;
		set_question(a);
		break;
	default:
		set_question(a);
		break;
	}
	return XP_REACT_REDRAW;
}

int xp_nact_key(struct xp_nact *a, struct xp_ui *ui, int key, const char *node, bool map)
{
	if (!a)
		return XP_REACT_UNHANDLED;
	switch (key) {
	case 's':
		if (!node) {
			xp_ui_message(ui, XP_ROLE_DIM, "no node under the cursor");
			return XP_REACT_REDRAW;
		}
		xp_ui_ssh(ui, node);
		return XP_REACT_REDRAW;
	case ' ':
		if (!map || !node)
			return XP_REACT_UNHANDLED;
		if (may(a, ui) != 1)
			return XP_REACT_REDRAW;
		long i = tag_index(a, node);
		if (i >= 0) {
			free(a->tags[i]);
			memmove(a->tags + i, a->tags + i + 1, (a->n_tags - (size_t)i - 1) * sizeof *a->tags);
			a->n_tags--;
		} else if (a->n_tags >= XP_NACT_MAX) {
			xp_ui_message(ui, XP_ROLE_WARN, "at most %d nodes in one action", XP_NACT_MAX);
		} else {
			xp_grow(&a->tags, sizeof *a->tags, a->n_tags, &a->cap_tags);
			a->tags[a->n_tags++] = xp_strdup(node);
		}
		return XP_REACT_REDRAW;
	case 'd':
	case 'u':
		return start(a, ui, key == 'd', map || !a->n_tags ? node : NULL);
	default:
		return XP_REACT_UNHANDLED;
	}
}

void xp_nact_draw(const struct xp_nact *a, WINDOW *w, struct xp_rect r)
{
	if (!a || a->ask == ASK_NONE || r.h <= 0)
		return;
	int y = r.y + r.h - 1, maxx = r.x + r.w;
	xp_draw_fill(w, y, r.x, maxx, XP_ROLE_NORMAL);
	int x = xp_draw_put(w, y, r.x + 1, maxx, XP_ROLE_WARN, a->text, 0);
	if (a->ask == ASK_REASON) {
		char shown[XP_LEDIT_MAX + 1];
		snprintf(shown, sizeof shown, "%s", a->reason.text + xp_ledit_scroll(&a->reason, maxx - x - 1));
		xp_mask_controls(shown);
		xp_draw_put(w, y, x, maxx, XP_ROLE_PROMPT, shown, 0);
	}
}

const struct xp_view_key *xp_nact_keys(struct xp_nact *a, const struct xp_view_key *base)
{
	static const struct xp_view_key always[] = {{"s", "run ssh on the node (--ssh-command, XPOOL_SSH)"}};
	static const struct xp_view_key acts[] = {
		{"Space", "tag / untag the node (for d and u)"},
		{"d", "drain (Slurm) / cordon (Kubernetes) the tagged nodes or this one"},
		{"u", "undrain / uncordon the tagged nodes or this one"},
	};
	size_t n = 0, cap = sizeof a->keys / sizeof a->keys[0] - 1;
	for (const struct xp_view_key *k = base; k && k->keys && n < cap; k++)
		a->keys[n++] = *k;
	if (n < cap)
		a->keys[n++] = always[0];
	/* Read-only: the action keys are not offered at all. */
	for (size_t i = 0; atomic_load(&a->access) == 1 && i < sizeof acts / sizeof acts[0] && n < cap; i++)
		a->keys[n++] = acts[i];
	a->keys[n] = (struct xp_view_key){NULL, NULL};
	return a->keys;
}
