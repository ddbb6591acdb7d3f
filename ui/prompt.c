/* prompt.c: the `:` prompt. GNU readline runs through its callback interface while
 * ncurses owns the terminal: the app hands us keys one at a time, we hand readline
 * bytes through rl_getc_function, and readline's redisplay is replaced by one that
 * draws into a curses row. readline never touches the tty: its output stream is
 * /dev/null and its terminal preparation hooks are disabled.
 *
 * readline keeps all its state in globals, so only one xp_prompt may exist at a time;
 * `current` points at it so that readline's hooks (which get no user pointer) find it. */
#include "prompt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <wchar.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "cmd.h"
#include "files.h"
#include "format.h"
#include "xp.h"

/* History lines kept in memory and in the file. */
#define HISTORY_MAX 1000
/* Longest escape sequence we collect before giving up on it. */
#define SEQ_MAX 16
/* Bytes waiting for readline: one key or one escape sequence at a time. */
#define QUEUE_MAX 32
/* Byte we stuff into readline to make it abandon the line (bound to cancel_cmd). */
#define CANCEL_BYTE 3

/* How one unit of text shows on screen. */
enum unit_kind {
	UNIT_TEXT, /* a printable character, drawn as its bytes */
	UNIT_CTRL, /* a control byte, drawn as ^X like readline does */
	UNIT_BAD   /* an invalid or unprintable sequence, drawn as '?' */
};

/* One character of the prompt or the line with the screen column it starts at. */
struct unit {
	const char *s;  /* its bytes */
	int len;        /* how many */
	int col;        /* first column, counted from the start of the prompt */
	int width;      /* columns it takes */
	int kind;       /* enum unit_kind */
};

struct xp_prompt {
	char *history_path;       /* NULL: no persistent history */
	bool saved;               /* xp_prompt_save ran (it runs once) */
	xp_prompt_names_fn names; /* node names for completion, or NULL */
	void *names_arg;
	FILE *devnull;            /* readline's output stream */

	WINDOW *w;                /* where the prompt row lives while open */
	int y, width;
	char *prefix;             /* ":" */
	int line_attr, hint_attr; /* attributes of the input and of the match list */
	bool open;
	bool cancelling;          /* the next line readline hands us is a cancel */
	int result;               /* enum xp_prompt_state of the last close */
	char *line;               /* the accepted line */
	char *hint;               /* completion matches shown after the input until the next key */
	int hscroll;              /* first column shown when the line is wider than the row */

	unsigned char seq[SEQ_MAX]; /* an escape sequence being collected */
	int seq_n;
	int skip;                   /* bytes of an X10 mouse report still to swallow */
	unsigned char queue[QUEUE_MAX];
	int q_head, q_len;

	struct unit *units;       /* scratch for drawing */
	size_t units_cap;

	/* readline settings we replaced, put back when the prompt is freed */
	rl_getc_func_t *old_getc;
	rl_hook_func_t *old_avail;
	rl_voidfunc_t *old_redisplay;
	rl_completion_func_t *old_complete;
	rl_compdisp_func_t *old_display;
	FILE *old_out;
};

/* The one prompt readline is working for (readline's state is global). */
static struct xp_prompt *current;

/* ---- completion ---- */

/* A growable list of completion candidates. */
struct list {
	char **v;
	size_t n, cap;
};

static void list_add(struct list *l, char *s)
{
	xp_grow(&l->v, sizeof *l->v, l->n + 1, &l->cap);
	l->v[l->n++] = s;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts, drops duplicates and NULL-terminates the list; returns the array. */
static char **list_finish(struct list *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof *l->v, cmp_str);
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (k && strcmp(l->v[k - 1], l->v[i]) == 0)
			free(l->v[i]);
		else
			l->v[k++] = l->v[i];
	}
	l->n = k;
	xp_grow(&l->v, sizeof *l->v, l->n + 1, &l->cap);
	l->v[l->n] = NULL;
	return l->v;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void add_commands(struct list *l, const char *text)
{
	for (int i = 0; xp_cmd_table[i]; i++) {
		const struct xp_cmd_entry *e = xp_cmd_table[i];
		if (has_prefix(e->name, text))
			list_add(l, xp_strdup(e->name));
		/* An alias that merely abbreviates its command ("inv") would only stop Tab from
		 * completing to the full name; an alias that is a different word is offered. */
		if (e->alias && has_prefix(e->alias, text) && !has_prefix(e->name, e->alias))
			list_add(l, xp_strdup(e->alias));
	}
}

static void add_opts(struct list *l, const struct xp_opt *opts, const char *text)
{
	for (const struct xp_opt *o = opts; o && o->name; o++) {
		char *s = xp_asprintf("--%s", o->name);
		if (has_prefix(s, text))
			list_add(l, s);
		else
			free(s);
	}
}

static void add_names(const struct xp_prompt *p, struct list *l, const char *text)
{
	if (!p || !p->names)
		return;
	const char *const *names = NULL;
	size_t n = p->names(p->names_arg, &names);
	for (size_t i = 0; i < n && names; i++)
		if (names[i] && has_prefix(names[i], text))
			list_add(l, xp_strdup(names[i]));
}

static void add_files(struct list *l, const char *text)
{
	char *f;
	for (int state = 0; (f = rl_filename_completion_function(text, state)) != NULL; state = 1)
		list_add(l, f);
}

/* Finds the option a word names: "--name", "--name=value" or a cluster of short letters
 * ("-qd", where only the last may take a value). Sets *inline_val when the value is inside
 * the word. The command's own table first, then the global one, as xp_cmd_parse does. */
static const struct xp_opt *word_opt(const struct xp_cmd_entry *e, const char *w, bool *inline_val)
{
	*inline_val = false;
	if (w[1] == '-') {
		const char *name = w + 2;
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		*inline_val = eq != NULL;
		for (const struct xp_opt *o = e ? e->opts : NULL; o && o->name; o++)
			if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
				return o;
		for (const struct xp_opt *o = xp_global_opts; o->name; o++)
			if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
				return o;
		return NULL;
	}
	const struct xp_opt *o = NULL;
	for (const char *c = w + 1; *c; c++) {
		o = NULL;
		for (const struct xp_opt *k = e ? e->opts : NULL; k && k->name && !o; k++)
			if (k->short_name == *c)
				o = k;
		if (!o)
			o = xp_global_find(NULL, *c);
		if (o && o->arg) {
			*inline_val = c[1] != '\0';
			return o;
		}
	}
	return o;
}

/* Positional words kept to match subcommands ("case add" is two). */
#define CTX_WORDS 4

/* What the words before the one being completed say about it. */
struct context {
	bool have_cmd;                 /* a command word was seen */
	const struct xp_cmd_entry *cmd; /* which (NULL when unknown) */
	const struct xp_opt *value_of; /* the word is the value of this option */
	int positional;                /* arguments seen after the command */
	char *pos[CTX_WORDS];          /* the first of them (owned), to match subcommand words */
	bool only_args;                /* after "--" */
};

static void scan_context(const char *line, int start, struct context *c)
{
	memset(c, 0, sizeof *c);
	size_t end = strlen(line);
	if (start >= 0 && (size_t)start < end)
		end = (size_t)start;
	size_t i = 0;
	while (i < end) {
		while (i < end && (line[i] == ' ' || line[i] == '\t'))
			i++;
		size_t b = i;
		while (i < end && line[i] != ' ' && line[i] != '\t')
			i++;
		if (i == b)
			break;
		char *w = xp_strndup(line + b, i - b);
		if (c->value_of)
			c->value_of = NULL;
		else if (!c->only_args && w[0] == '-' && w[1]) {
			if (strcmp(w, "--") == 0)
				c->only_args = c->have_cmd;
			else {
				bool inl;
				const struct xp_opt *o = word_opt(c->cmd, w, &inl);
				if (o && o->arg && !inl)
					c->value_of = o;
			}
		} else if (!c->have_cmd) {
			struct xp_err err;
			c->have_cmd = true;
			c->cmd = xp_cmd_find(w, &err);
		} else {
			if (c->positional < CTX_WORDS) {
				c->pos[c->positional] = w;
				w = NULL;
			}
			c->positional++;
		}
		free(w);
	}
}

static void context_free(struct context *c)
{
	for (int i = 0; i < CTX_WORDS; i++)
		free(c->pos[i]);
}

/* Offers the next word of the command's subcommands whose first words are those typed
 * (none once the subcommand is complete). */
static void add_subs(struct list *l, const struct xp_cmd_entry *e, const struct context *c, const char *text)
{
	char buf[128];
	for (const struct xp_subcmd *u = e->subs; u->words; u++) {
		snprintf(buf, sizeof buf, "%s", u->words);
		/* Walk the subcommand's words alongside the typed ones. */
		char *save = NULL, *w = strtok_r(buf, " ", &save);
		int k = 0;
		while (w && k < c->positional && k < CTX_WORDS && strcmp(w, c->pos[k]) == 0) {
			w = strtok_r(NULL, " ", &save);
			k++;
		}
		if (w && k == c->positional && has_prefix(w, text))
			list_add(l, xp_strdup(w));
	}
}

/* Offers an option's value: its own list, node names, or file names (sets *files). */
static void add_values(const struct xp_prompt *p, struct list *l, const struct xp_opt *o, const char *text,
		       bool *files)
{
	if (o->value) {
		const char *v;
		for (int i = 0; (v = o->value(i)) != NULL; i++)
			if (has_prefix(v, text))
				list_add(l, xp_strdup(v));
	} else if (o->arg && strcmp(o->arg, "NODE") == 0) {
		add_names(p, l, text);
	} else if (o->arg && (strstr(o->arg, "FILE") || strstr(o->arg, "PATH"))) {
		add_files(l, text);
		*files = true;
	}
	/* A number or a free-form name has no list. */
}

/* The candidates for text at start of line; *files tells whether they are file names. */
static char **complete(const struct xp_prompt *p, const char *line, int start, const char *text,
		       bool *files)
{
	struct list l = {0};
	struct context c;
	*files = false;
	if (!line)
		line = "";
	if (!text)
		text = "";
	scan_context(line, start, &c);
	if (c.value_of) {
		add_values(p, &l, c.value_of, text, files);
	} else if (text[0] == '-' && !c.only_args) {
		if (c.cmd)
			add_opts(&l, c.cmd->opts, text);
		add_opts(&l, xp_global_opts, text);
	} else if (!c.have_cmd) {
		add_commands(&l, text);
	} else if (c.cmd && strcmp(c.cmd->name, "help") == 0) {
		/* `help COMMAND` takes a command name, not a node. */
		if (c.positional == 0)
			add_commands(&l, text);
	} else if (c.cmd && c.cmd->arg_values) {
		/* The command names what its argument is (`theme`: a theme name). */
		if (c.positional == 0) {
			char **v;
			size_t n = c.cmd->arg_values(&v);
			for (size_t i = 0; i < n; i++)
				if (has_prefix(v[i], text))
					list_add(&l, xp_strdup(v[i]));
			xp_strv_free(v, n);
		}
	} else if (c.cmd && c.cmd->subs) {
		/* A command with subcommands takes their words first; what follows a subcommand
		 * is its own (a case, an environment, a URL), never a node name. */
		add_subs(&l, c.cmd, &c, text);
	} else {
		add_names(p, &l, text);
	}
	context_free(&c);
	return list_finish(&l);
}

char **xp_prompt_complete(struct xp_prompt *p, const char *line, int start, const char *text)
{
	bool files;
	return complete(p, line, start, text, &files);
}

/* Length of the common prefix of the matches, backed off to a whole UTF-8 character. */
static size_t common_prefix(char **m, size_t n)
{
	size_t len = strlen(m[0]);
	for (size_t i = 1; i < n; i++) {
		size_t k = 0;
		while (k < len && m[i][k] == m[0][k])
			k++;
		len = k;
	}
	while (len && ((unsigned char)m[0][len] & 0xc0) == 0x80)
		len--;
	return len;
}

/* readline's completion entry: our candidates in the shape readline wants (the text to
 * substitute first, then the matches). Never falls back to readline's file completion. */
static char **rl_complete_cb(const char *text, int start, int end)
{
	(void)end;
	rl_attempted_completion_over = 1;
	bool files;
	char **m = complete(current, rl_line_buffer, start, text, &files);
	size_t n = 0;
	while (m[n])
		n++;
	if (n == 0) {
		free(m);
		return NULL;
	}
	if (files)
		rl_filename_completion_desired = 1;
	if (n == 1)
		return m;
	char **out = xp_calloc(n + 2, sizeof *out);
	out[0] = xp_strndup(m[0], common_prefix(m, n));
	memcpy(out + 1, m, n * sizeof *m);
	free(m);
	return out;
}

/* readline wants to list the matches: show them after the input instead of on the tty. */
static void rl_show_matches(char **matches, int n, int max_len)
{
	(void)max_len;
	struct xp_prompt *p = current;
	if (!p)
		return;
	size_t len = 0;
	for (int i = 1; i <= n; i++)
		len += strlen(matches[i]) + 2;
	char *s = xp_malloc(len + 1);
	s[0] = '\0';
	char *at = s;
	for (int i = 1; i <= n; i++) {
		const char *m = matches[i];
		if (rl_filename_completion_desired) {
			/* Like readline's own listing: only the last part of a path. */
			size_t ml = strlen(m);
			const char *slash = NULL;
			for (size_t k = 0; k + 1 < ml; k++)
				if (m[k] == '/')
					slash = m + k;
			if (slash)
				m = slash + 1;
		}
		at += sprintf(at, "%s%s", i > 1 ? "  " : "", m);
	}
	free(p->hint);
	p->hint = s;
	rl_forced_update_display();
}

/* ---- drawing ---- */

/* Measures the character at s (n bytes left): its byte length, width and kind. */
static int measure(const char *s, size_t n, int *width, int *kind)
{
	unsigned char c = (unsigned char)s[0];
	if (c < 0x20 || c == 0x7f) {
		*width = 2;
		*kind = UNIT_CTRL;
		return 1;
	}
	if (c < 0x80) {
		*width = 1;
		*kind = UNIT_TEXT;
		return 1;
	}
	/* A bidirectional control (pasted, or in a recalled line) would reorder the line around
	 * it: one '?', as everywhere the console draws (xp_bidi_len). C1 controls have no width
	 * and are bad below. */
	size_t b = xp_bidi_len(s);
	if (b && b <= n) {
		*width = 1;
		*kind = UNIT_BAD;
		return (int)b;
	}
	mbstate_t st;
	memset(&st, 0, sizeof st);
	wchar_t wc;
	size_t r = mbrtowc(&wc, s, n, &st);
	if (r == (size_t)-1 || r == (size_t)-2 || r == 0) {
		*width = 1;
		*kind = UNIT_BAD;
		return 1;
	}
	int wd = wcwidth(wc);
	*width = wd < 0 ? 1 : wd;
	*kind = wd < 0 ? UNIT_BAD : UNIT_TEXT;
	return (int)r;
}

/* Splits s into units starting at column col; returns the column after the last. Bytes
 * \001 and \002 (readline's invisible-prompt markers) take no room and are skipped. */
static int add_units(struct xp_prompt *p, size_t *n, const char *s, int col, bool skip_markers)
{
	size_t len = strlen(s);
	for (size_t i = 0; i < len;) {
		if (skip_markers && (s[i] == '\001' || s[i] == '\002')) {
			i++;
			continue;
		}
		struct unit u = {.s = s + i, .col = col};
		u.len = measure(s + i, len - i, &u.width, &u.kind);
		xp_grow(&p->units, sizeof *p->units, *n + 1, &p->units_cap);
		p->units[(*n)++] = u;
		col += u.width;
		i += (size_t)u.len;
	}
	return col;
}

static void put_unit(WINDOW *w, int y, int x, const struct unit *u)
{
	if (u->kind == UNIT_CTRL) {
		unsigned char c = (unsigned char)u->s[0];
		mvwaddch(w, y, x, '^');
		waddch(w, c == 0x7f ? '?' : (chtype)(c ^ 0x40));
	} else if (u->kind == UNIT_BAD)
		mvwaddch(w, y, x, '?');
	else
		mvwaddnstr(w, y, x, u->s, u->len);
}

/* Draws units [from, to) whose columns, shifted left by shift, fall inside [x0, x1). */
static void put_units(struct xp_prompt *p, size_t from, size_t to, int shift, int x0, int x1)
{
	for (size_t i = from; i < to; i++) {
		const struct unit *u = &p->units[i];
		int x = u->col - shift;
		if (x < x0 || (u->width == 0 && x <= x0))
			continue; /* off the left edge, or a combining mark with nothing to join */
		if (x + u->width > x1)
			break;
		put_unit(p->w, p->y, x, u);
	}
}

/* Chooses the first column shown so that the cursor stays visible. When the text does not
 * fit, column 0 shows '<' once scrolled and the last column '>' while text is cut off. */
static int scroll_for(struct xp_prompt *p, int cursor, int total)
{
	int width = p->width;
	if (total + 1 <= width)
		return 0;
	if (width < 4)
		return cursor >= width ? cursor - width + 1 : 0;
	int h = p->hscroll;
	int max_h = total + 2 - width; /* the end of the text then sits at the next-to-last column */
	if (h > max_h)
		h = max_h;
	if (h < 0)
		h = 0;
	if (cursor < h + (h > 0)) /* jump back by half a row rather than one column at a time */
		h = cursor - width / 2 > 0 ? cursor - width / 2 : 0;
	if (cursor > h + width - 2)
		h = cursor - width + 2;
	return h;
}

static void render(struct xp_prompt *p)
{
	if (!p || !p->open || !p->w)
		return;
	int maxy = getmaxy(p->w), maxx = getmaxx(p->w);
	if (p->y < 0 || p->y >= maxy || p->width <= 0)
		return;
	if (p->width > maxx)
		p->width = maxx;
	const char *prompt = rl_display_prompt ? rl_display_prompt : p->prefix;
	const char *text = rl_line_buffer ? rl_line_buffer : "";
	size_t n = 0;
	int text_col = add_units(p, &n, prompt, 0, true);
	size_t text_from = n;
	int total = add_units(p, &n, text, text_col, false);
	int cursor = text_col;
	for (size_t i = text_from; i < n && p->units[i].s - text < rl_point; i++)
		cursor = p->units[i].col + p->units[i].width;

	attr_t old_attr;
	short old_pair;
	wattr_get(p->w, &old_attr, &old_pair, NULL);
	wattrset(p->w, p->line_attr);
	wmove(p->w, p->y, 0);
	for (int x = 0; x < p->width; x++)
		waddch(p->w, ' ');

	int width = p->width;
	int h = scroll_for(p, cursor, total);
	p->hscroll = h;
	bool marks = width >= 4 && total + 1 > width;
	bool left = marks && h > 0;
	bool right = marks && total - h > width - 1;
	put_units(p, 0, n, h, left ? 1 : 0, right ? width - 1 : width);
	if (left)
		mvwaddch(p->w, p->y, 0, '<');
	if (right)
		mvwaddch(p->w, p->y, width - 1, '>');

	/* The match list goes after the input while there is room for it. */
	int hx = total - h + 2;
	if (p->hint && !right && hx < width) {
		wattrset(p->w, p->hint_attr);
		size_t from = n;
		add_units(p, &n, p->hint, hx, false);
		put_units(p, from, n, 0, hx, width);
	}
	wattr_set(p->w, old_attr, old_pair, NULL);
	int cx = cursor - h;
	wmove(p->w, p->y, cx < width ? cx : width - 1);
	wnoutrefresh(p->w);
}

/* ---- readline hooks ---- */

static int rl_getc_cb(FILE *f)
{
	(void)f;
	struct xp_prompt *p = current;
	/* We only call into readline with a byte queued; an empty queue means a command
	 * tried to read ahead, and EOF makes it give up rather than wait. */
	if (!p || p->q_len == 0)
		return EOF;
	int c = p->queue[p->q_head];
	p->q_head = (p->q_head + 1) % QUEUE_MAX;
	p->q_len--;
	return c;
}

static int rl_avail_cb(void)
{
	return current && current->q_len > 0;
}

static void rl_redisplay_cb(void)
{
	render(current);
}

static void close_prompt(struct xp_prompt *p, int result)
{
	p->open = false;
	p->result = result;
	p->seq_n = 0;
	p->skip = 0;
	p->q_len = 0;
	free(p->hint);
	p->hint = NULL;
}

static bool blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t')
			return false;
	return true;
}

static void remember(const char *line)
{
	HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
	if (!last || !last->line || strcmp(last->line, line) != 0)
		add_history(line);
}

/* readline finished a line: Enter, Ctrl-D on an empty line (NULL), or our cancel. */
static void rl_line_cb(char *line)
{
	struct xp_prompt *p = current;
	/* Removing the handler here stops readline from starting a fresh line (and drawing
	 * its prompt) as soon as we return. */
	rl_callback_handler_remove();
	if (!p) {
		free(line);
		return;
	}
	if (p->cancelling || !line || blank(line)) {
		free(line);
		close_prompt(p, XP_PROMPT_CANCEL);
		return;
	}
	remember(line);
	free(p->line);
	p->line = line;
	close_prompt(p, XP_PROMPT_DONE);
}

/* Bound to CANCEL_BYTE: ends the line through readline's own accept path so that it
 * tidies up (edited history lines reverted, undo lists freed); rl_line_cb then sees
 * `cancelling` and throws the line away. */
static int cancel_cmd(int count, int key)
{
	if (current)
		current->cancelling = true;
	return rl_newline(count, key);
}

/* ---- feeding keys ---- */

static void push(struct xp_prompt *p, const unsigned char *b, int n)
{
	for (int i = 0; i < n && p->q_len < QUEUE_MAX; i++) {
		p->queue[(p->q_head + p->q_len) % QUEUE_MAX] = b[i];
		p->q_len++;
	}
}

/* Lets readline eat what is queued; returns the prompt's state afterwards. */
static int pump(struct xp_prompt *p)
{
	while (p->open && p->q_len > 0) {
		int before = p->q_len;
		rl_callback_read_char();
		if (p->q_len == before)
			break; /* readline read nothing: drop the rest rather than spin */
	}
	p->q_len = 0;
	return p->open ? XP_PROMPT_EDITING : p->result;
}

static int cancel(struct xp_prompt *p)
{
	if (!p->open)
		return p->result;
	p->seq_n = 0;
	p->skip = 0;
	p->q_len = 0;
	/* Leave any multi-key state (incremental search, numeric argument, quoted insert)
	 * so that the cancel byte is read as a plain key. */
	rl_callback_sigcleanup();
	unsigned char b = CANCEL_BYTE;
	p->cancelling = true;
	push(p, &b, 1);
	pump(p);
	p->cancelling = false;
	if (p->open) {
		/* The key did not reach cancel_cmd (an inputrc keymap we do not know): end by hand. */
		rl_free_line_state();
		rl_callback_handler_remove();
		close_prompt(p, XP_PROMPT_CANCEL);
	}
	return XP_PROMPT_CANCEL;
}

/* A complete escape sequence: hand it to readline if it means something there. Unknown
 * sequences (function keys, mouse reports) are dropped whole; readline would otherwise
 * ring the bell and insert their tail as text. */
static int escape_done(struct xp_prompt *p)
{
	char s[SEQ_MAX + 1];
	int n = p->seq_n;
	memcpy(s, p->seq, (size_t)n);
	s[n] = '\0';
	p->seq_n = 0;
	if (strcmp(s, "\033[M") == 0) {
		p->skip = 3; /* X10 mouse report: three raw bytes follow */
		return XP_PROMPT_EDITING;
	}
	/* Bracketed paste would make readline read the pasted text synchronously. */
	if (strcmp(s, "\033[200~") == 0 || strcmp(s, "\033[201~") == 0)
		return XP_PROMPT_EDITING;
	int type = ISFUNC;
	rl_command_func_t *f = rl_function_of_keyseq(s, NULL, &type);
	if (!f || type == ISKMAP)
		return XP_PROMPT_EDITING;
	/* Esc then Enter typed within the Esc timeout reads as Alt-Enter, which emacs mode binds
	 * to vi mode, where Esc means something else entirely: not by accident. */
	if (f == rl_vi_editing_mode)
		return XP_PROMPT_EDITING;
	push(p, p->seq, n);
	return pump(p);
}

/* Keys ncurses decoded (keypad on) as the bytes a terminal sends, so both modes work. */
static const char *keypad_bytes(int ch)
{
	switch (ch) {
	case KEY_UP: return "\033[A";
	case KEY_DOWN: return "\033[B";
	case KEY_RIGHT: return "\033[C";
	case KEY_LEFT: return "\033[D";
	case KEY_HOME: return "\033[H";
	case KEY_END: return "\033[F";
	case KEY_DC: return "\033[3~";
	case KEY_BACKSPACE: return "\177";
	case KEY_ENTER: return "\r";
	default: return NULL;
	}
}

int xp_prompt_feed(struct xp_prompt *p, int ch)
{
	if (!p || !p->open)
		return XP_PROMPT_CANCEL;
	if (ch == ERR) {
		/* Nothing followed: a lone Esc cancels; a cut-off sequence is dropped. */
		if (p->seq_n == 1)
			return cancel(p);
		p->seq_n = 0;
		return XP_PROMPT_EDITING;
	}
	if (ch < 0 || ch == KEY_RESIZE)
		return XP_PROMPT_EDITING;
	if (ch > 0xff) {
		const char *b = keypad_bytes(ch);
		if (!b)
			return XP_PROMPT_EDITING;
		free(p->hint);
		p->hint = NULL;
		push(p, (const unsigned char *)b, (int)strlen(b));
		return pump(p);
	}
	if (p->skip > 0) {
		p->skip--;
		return XP_PROMPT_EDITING;
	}
	free(p->hint);
	p->hint = NULL;
	if (ch == CANCEL_BYTE)
		return cancel(p);
	if (p->seq_n == 0) {
		if (ch == 27) {
			p->seq[0] = 27;
			p->seq_n = 1;
			return XP_PROMPT_EDITING;
		}
		unsigned char b = (unsigned char)ch;
		push(p, &b, 1);
		return pump(p);
	}
	if (ch == 27) {
		if (p->seq_n == 1)
			return cancel(p); /* Esc Esc: the user wants out */
		p->seq_n = 1;         /* a new sequence cuts off the old one */
		return XP_PROMPT_EDITING;
	}
	if (p->seq_n >= 2 && (ch < 0x20 || ch > 0x7e)) {
		/* Not part of a CSI or SS3 sequence after all: drop the sequence, keep the key. */
		p->seq_n = 0;
		return xp_prompt_feed(p, ch);
	}
	p->seq[p->seq_n++] = (unsigned char)ch;
	bool done;
	if (p->seq_n == 2)
		done = ch != '[' && ch != 'O'; /* Alt-key */
	else if (p->seq[1] == 'O')
		done = true; /* SS3: one more byte */
	else
		done = ch >= 0x40 && ch <= 0x7e; /* CSI: parameters until a final byte */
	if (done)
		return escape_done(p);
	if (p->seq_n == SEQ_MAX)
		p->seq_n = 0; /* nothing we know is this long */
	return XP_PROMPT_EDITING;
}

bool xp_prompt_esc_pending(const struct xp_prompt *p)
{
	return p && p->open && p->seq_n > 0;
}

/* ---- life cycle ---- */

int xp_prompt_save(struct xp_prompt *p, struct xp_err *err)
{
	if (!p || !p->history_path || p->saved)
		return 0;
	p->saved = true;
	/* xpool's own state folder (0700, the user's alone), and a whole new file renamed into
	 * place: never written through a link (readline's write_history follows one, and names its
	 * temporary in advance), 0600 whatever the umask. The history is stifled to its limit. */
	char *dir = xp_dir_of(p->history_path);
	int rc = xp_private_dir(dir, true, err);
	free(dir);
	struct xp_afile a;
	if (rc < 0 || xp_afile_open(&a, p->history_path, XP_FMODE_PRIVATE, err) < 0)
		return -1;
	HIST_ENTRY **h = history_list();
	for (int i = 0; h && h[i]; i++)
		fprintf(a.f, "%s\n", h[i]->line);
	return xp_afile_commit(&a, err);
}

struct xp_prompt *xp_prompt_new(const char *history_path, xp_prompt_names_fn names, void *arg)
{
	struct xp_prompt *p = xp_calloc(1, sizeof *p);
	p->history_path = xp_strdup(history_path);
	p->names = names;
	p->names_arg = arg;
	p->line_attr = A_NORMAL;
	p->hint_attr = A_DIM;
	p->result = XP_PROMPT_CANCEL;
	p->devnull = fopen("/dev/null", "w");
	current = p;

	p->old_getc = rl_getc_function;
	p->old_avail = rl_input_available_hook;
	p->old_redisplay = rl_redisplay_function;
	p->old_complete = rl_attempted_completion_function;
	p->old_display = rl_completion_display_matches_hook;
	p->old_out = rl_outstream;

	rl_readline_name = "xpool";
	/* ncurses owns the terminal, its modes and its signals. */
	rl_catch_signals = 0;
	rl_catch_sigwinch = 0;
	rl_change_environment = 0; /* exporting LINES/COLUMNS would freeze ncurses' size */
	rl_prep_term_function = NULL;
	rl_deprep_term_function = NULL;
	/* Bells and match listings go nowhere instead of onto the curses screen. */
	if (p->devnull)
		rl_outstream = p->devnull;
	rl_getc_function = rl_getc_cb;
	rl_input_available_hook = rl_avail_cb;
	/* Set before readline first initializes: with its own redisplay replaced, readline
	 * skips tgetent, which would otherwise swap ncurses' current terminal. */
	rl_redisplay_function = rl_redisplay_cb;
	rl_attempted_completion_function = rl_complete_cb;
	rl_completion_display_matches_hook = rl_show_matches;
	rl_completer_word_break_characters = " \t\n";
	rl_completer_quote_characters = "\"'";
	/* Defaults that suit a one-row prompt; ~/.inputrc, read at the first initialization
	 * below, may still change them. The bell is silent here, so list matches at once. */
	static bool defaults_set;
	if (!defaults_set) {
		rl_variable_bind("show-all-if-ambiguous", "on");
		rl_variable_bind("revert-all-at-newline", "on");
		defaults_set = true;
	}
	rl_initialize();
	/* These would read the terminal behind ncurses' back: forced off whatever inputrc says. */
	rl_variable_bind("blink-matching-paren", "off");
	rl_variable_bind("enable-bracketed-paste", "off");
	static const char *const maps[] = {"emacs-standard", "vi-insert", "vi-command"};
	for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
		Keymap km = rl_get_keymap_by_name(maps[i]);
		if (km)
			rl_bind_key_in_map(CANCEL_BYTE, cancel_cmd, km);
	}
	/* Without termcap readline binds only the arrow keys; add the other editing keys as
	 * xterm-like terminals send them. */
	Keymap emacs = rl_get_keymap_by_name("emacs-standard");
	if (emacs) {
		static const struct {
			const char *seq;
			rl_command_func_t *fn;
		} keys[] = {
			{"\033[3~", rl_delete},
			{"\033[1~", rl_beg_of_line}, {"\033[4~", rl_end_of_line},
			{"\033[7~", rl_beg_of_line}, {"\033[8~", rl_end_of_line},
			{"\033OH", rl_beg_of_line}, {"\033OF", rl_end_of_line},
		};
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
			rl_bind_keyseq_if_unbound_in_map(keys[i].seq, keys[i].fn, emacs);
	}

	using_history();
	stifle_history(HISTORY_MAX);
	/* A missing file is simply an empty history; one in a folder others may write in is not
	 * read (it could hold lines another user put there). */
	struct xp_err err = {{0}};
	char *dir = p->history_path ? xp_dir_of(p->history_path) : NULL;
	if (dir && xp_private_dir(dir, false, &err) == 0)
		read_history(p->history_path);
	free(dir);
	return p;
}

/* Frees the undo lists readline left on history entries (lines edited but not run);
 * clear_history hands them back instead of freeing them. */
static void drop_undo_lists(void)
{
	if (rl_undo_list)
		rl_free_undo_list();
	HIST_ENTRY **h = history_list();
	for (int i = 0; h && h[i]; i++) {
		if (!h[i]->data)
			continue;
		rl_undo_list = (UNDO_LIST *)h[i]->data;
		rl_free_undo_list();
		h[i]->data = NULL;
	}
}

void xp_prompt_free(struct xp_prompt *p)
{
	if (!p)
		return;
	if (p->open)
		cancel(p);
	struct xp_err err = {{0}};
	xp_prompt_save(p, &err); /* the console saves first and says why it could not */
	drop_undo_lists();
	clear_history();

	rl_getc_function = p->old_getc;
	rl_input_available_hook = p->old_avail;
	rl_redisplay_function = p->old_redisplay;
	rl_attempted_completion_function = p->old_complete;
	rl_completion_display_matches_hook = p->old_display;
	rl_outstream = p->old_out;
	if (current == p)
		current = NULL;
	if (p->devnull)
		fclose(p->devnull);
	free(p->history_path);
	free(p->prefix);
	free(p->line);
	free(p->hint);
	free(p->units);
	free(p);
}

void xp_prompt_open(struct xp_prompt *p, WINDOW *w, int y, int width, const char *prefix)
{
	if (!p)
		return;
	p->w = w;
	p->y = y;
	p->width = width;
	if (p->open) {
		render(p);
		return;
	}
	free(p->prefix);
	p->prefix = xp_strdup(prefix ? prefix : "");
	free(p->line);
	p->line = NULL;
	free(p->hint);
	p->hint = NULL;
	p->hscroll = 0;
	p->seq_n = 0;
	p->skip = 0;
	p->q_len = 0;
	p->cancelling = false;
	p->open = true;
	p->result = XP_PROMPT_EDITING;
	current = p;
	/* Installs the line handler, starts a fresh line and draws the prompt through us. */
	rl_callback_handler_install(p->prefix, rl_line_cb);
}

bool xp_prompt_active(const struct xp_prompt *p)
{
	return p && p->open;
}

const char *xp_prompt_line(const struct xp_prompt *p)
{
	return p && p->line ? p->line : "";
}

void xp_prompt_draw(struct xp_prompt *p)
{
	render(p);
}

void xp_prompt_resize(struct xp_prompt *p, int y, int width)
{
	if (!p)
		return;
	p->y = y;
	p->width = width;
}

void xp_prompt_set_attrs(struct xp_prompt *p, int line_attr, int hint_attr)
{
	if (!p)
		return;
	p->line_attr = line_attr;
	p->hint_attr = hint_attr;
}
