/* filter.c: the filter language (filter.h): a hand-written lexer and recursive-descent parser
 * into a flat array of expression nodes, and an evaluator over rows reached through a getter,
 * so that nodes, devices, jobs and events share one grammar and only differ in their fields.
 *
 * Hostile input is bounded before any work: the length (XP_FILTER_MAX_LEN), the nesting
 * (XP_FILTER_MAX_DEPTH, counted on the parser's own recursion), the bytes (control characters
 * and invalid UTF-8 are refused, so an error message quoting the expression is safe to print),
 * and the numbers (finite, plain decimal: no "nan", "inf" or hex that strtod would take). Globs
 * are matched by a backtracking-free loop (one remembered star), linear in practice and at worst
 * pattern x text, never exponential. */
#include "filter.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "problems.h"

enum kind { K_AND, K_OR, K_NOT, K_CMP, K_WORD };
enum op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

struct enode {
	unsigned char kind; /* enum kind */
	unsigned char op;   /* enum op, for K_CMP */
	bool numeric;       /* K_CMP: the field is a number and num holds the value */
	int a, b;           /* children (K_AND, K_OR: both; K_NOT: a) */
	char *field;        /* K_CMP */
	char *str;          /* K_CMP: the value as written; K_WORD: the word */
	double num;
};

struct xp_filter {
	struct enode *n;
	size_t len, cap;
	int root;
	bool fields_used;    /* some K_CMP */
	bool device_fields;  /* some K_CMP on a device field (xp_filter_node evaluates per device) */
};

/* ---- lexer ---- */

enum tok { T_END, T_LP, T_RP, T_NOT, T_AND, T_OR, T_OP, T_WORD, T_STR };

struct lex {
	const char *s;   /* the expression */
	size_t pos;      /* next byte */
	int tok;         /* enum tok of the current token */
	size_t start;    /* its first byte */
	char *text;      /* T_WORD, T_STR: its text (owned) */
	int op;          /* T_OP: enum op */
	struct xp_err *err;
	int depth;
	const struct xp_filter_field *fields;
	struct xp_filter *f;
};

/* The 1-based column of byte offset off: characters, not bytes (the expression is valid UTF-8). */
static int column(const char *s, size_t off)
{
	int col = 1;
	for (size_t i = 0; i < off && s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			col++;
	return col;
}

static int lex_err(struct lex *lx, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int lex_err(struct lex *lx, size_t off, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return xp_errf(lx->err, "column %d: %s", column(lx->s, off), msg);
}

/* Bytes that end a word: space, the operators and the brackets. ':' is not one: "0000:3b:00.0"
 * and "1g.10gb" stay words, and "model:H100*" is split by the parser when the part before the
 * colon is a field. */
static bool word_end(char c)
{
	return !c || strchr(" \t()!&|=<>\"'", c) != NULL;
}

static int next(struct lex *lx)
{
	free(lx->text);
	lx->text = NULL;
	const char *s = lx->s;
	while (s[lx->pos] == ' ' || s[lx->pos] == '\t')
		lx->pos++;
	lx->start = lx->pos;
	char c = s[lx->pos];
	if (!c)
		return lx->tok = T_END;
	lx->pos++;
	switch (c) {
	case '(': return lx->tok = T_LP;
	case ')': return lx->tok = T_RP;
	case '&':
		if (s[lx->pos] == '&')
			lx->pos++;
		return lx->tok = T_AND;
	case '|':
		if (s[lx->pos] == '|')
			lx->pos++;
		return lx->tok = T_OR;
	case '!':
		if (s[lx->pos] == '=') {
			lx->pos++;
			lx->op = OP_NE;
			return lx->tok = T_OP;
		}
		return lx->tok = T_NOT;
	case '=':
		if (s[lx->pos] == '=')
			lx->pos++;
		lx->op = OP_EQ;
		return lx->tok = T_OP;
	case '<':
	case '>': {
		bool eq = s[lx->pos] == '=';
		if (eq)
			lx->pos++;
		lx->op = c == '<' ? (eq ? OP_LE : OP_LT) : (eq ? OP_GE : OP_GT);
		return lx->tok = T_OP;
	}
	case '"':
	case '\'': {
		const char *end = strchr(s + lx->pos, c);
		if (!end)
			return lex_err(lx, lx->start, "unterminated quote %c", c), lx->tok = -1;
		lx->text = xp_strndup(s + lx->pos, (size_t)(end - (s + lx->pos)));
		lx->pos = (size_t)(end - s) + 1;
		return lx->tok = T_STR;
	}
	default:
		while (!word_end(s[lx->pos]))
			lx->pos++;
		lx->text = xp_strndup(s + lx->start, lx->pos - lx->start);
		return lx->tok = T_WORD;
	}
}

/* ---- fields ---- */

static const struct xp_filter_field *field_find(const struct xp_filter_field *fields, const char *name)
{
	for (const struct xp_filter_field *f = fields; f && f->name; f++) {
		size_t n = strlen(f->name);
		if (n && f->name[n - 1] == '.') {
			if (!strncasecmp(name, f->name, n) && name[n])
				return f;
		} else if (!strcasecmp(name, f->name)) {
			return f;
		}
	}
	return NULL;
}

static void field_list(const struct xp_filter_field *fields, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (const struct xp_filter_field *f = fields; f && f->name && at + 1 < len; f++) {
		size_t n = strlen(f->name);
		int w = snprintf(buf + at, len - at, "%s%s%s", at ? " " : "", f->name,
				 n && f->name[n - 1] == '.' ? "KEY" : "");
		if (w < 0 || (size_t)w >= len - at)
			break;
		at += (size_t)w;
	}
}

/* Parses a number with an optional unit suffix for a field counted in unit; false when it is
 * not one (the caller names the column). Plain decimals only: strtod would take "nan", "inf"
 * and hex, none of which a person means here. */
static bool parse_number(const char *s, const char *unit, double *out)
{
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (p - s > 40)
		return false; /* more digits than any double holds: a typo or an attack */
	char num[48];
	memcpy(num, s, (size_t)(p - s));
	num[p - s] = '\0';
	errno = 0;
	double v = strtod(num, NULL);
	if (errno == ERANGE || !isfinite(v))
		return false;
	double scale = 1;
	if (*p) {
		if (!unit)
			return false;
		if (!strcmp(unit, "MiB")) {
			/* K, M, G, T (with an optional iB or B): memory as every listing prints it */
			switch (toupper((unsigned char)*p)) {
			case 'K': scale = 1.0 / 1024; break;
			case 'M': scale = 1; break;
			case 'G': scale = 1024; break;
			case 'T': scale = 1024.0 * 1024; break;
			default: return false;
			}
			p++;
			if (!strcasecmp(p, "ib") || !strcasecmp(p, "b"))
				p += strlen(p);
		} else if (!strcmp(unit, "W") && (p[0] == 'k' || p[0] == 'K') && (p[1] == 'W' || p[1] == 'w')) {
			scale = 1000;
			p += 2;
		} else if (!strcasecmp(p, unit) || (!strcmp(unit, "C") && !strcasecmp(p, "°C"))) {
			p += strlen(p);
		}
		if (*p)
			return false;
	}
	*out = v * scale;
	return isfinite(*out);
}

/* ---- parser ---- */

static int add_node(struct xp_filter *f, struct enode n)
{
	xp_grow(&f->n, sizeof *f->n, f->len, &f->cap);
	f->n[f->len] = n;
	return (int)f->len++;
}

static const char *const device_field_names[] = {"health", "model", "vendor", "arch", "driver", "util", "mem",
						 "memtotal", "temp", "power", "numa", "ecc", "dev", "uuid",
						 NULL};

static bool is_device_field(const char *name)
{
	for (size_t i = 0; device_field_names[i]; i++)
		if (!strcasecmp(name, device_field_names[i]))
			return true;
	return false;
}

static int parse_or(struct lex *lx);

/* True for a name made like a field's (a letter, then letters, digits and '_'), which before a
 * ':' is meant as one. */
static bool looks_like_field(const char *s)
{
	if (!isalpha((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* term := FIELD OP VALUE | FIELD ':' VALUE | WORD */
static int parse_term(struct lex *lx)
{
	if (lx->tok != T_WORD && lx->tok != T_STR) {
		if (lx->tok == T_END)
			return lex_err(lx, lx->start, "expression ends where a term was expected");
		return lex_err(lx, lx->start, "expected a field or a word at '%.*s'", 1, lx->s + lx->start);
	}
	size_t at = lx->start;
	bool quoted = lx->tok == T_STR;
	char *word = lx->text;
	lx->text = NULL;
	const char *colon = quoted ? NULL : strchr(word, ':');
	char *field = NULL, *value = NULL;
	int op = OP_EQ;
	size_t vat = at;
	if (colon) {
		char *name = xp_strndup(word, (size_t)(colon - word));
		if (field_find(lx->fields, name)) {
			field = name;
			value = xp_strdup(colon + 1);
			vat = at + (size_t)(colon - word) + 1;
			/* model:'H100 SXM*': the quoted value is the next token (a quote ends a
			 * word). */
			if (!*value && lx->s[lx->pos] != '\'' && lx->s[lx->pos] != '"') {
				free(field);
				free(value);
				free(word);
				return lex_err(lx, vat, "a value must follow ':'");
			}
			if (!*value) {
				if (next(lx) < 0) {
					free(field), free(value), free(word);
					return -1;
				}
				free(value);
				value = lx->text;
				lx->text = NULL;
			}
		} else if (looks_like_field(name)) {
			/* "modle:H100*" is a typo to name, not a word to look for; "0000:3b:00.0" is
			 * a word. */
			char list[512];
			field_list(lx->fields, list, sizeof list);
			int r = *list ? lex_err(lx, at, "unknown field '%s' (fields: %s)", name, list)
				      : lex_err(lx, at, "unknown field '%s' (this view filters by words only)", name);
			free(name);
			free(word);
			return r;
		} else {
			free(name);
		}
	}
	if (next(lx) < 0) {
		free(field), free(value), free(word);
		return -1;
	}
	if (!field && lx->tok == T_OP) {
		if (quoted) {
			free(word);
			return lex_err(lx, at, "a field name is not quoted");
		}
		field = word;
		word = NULL;
		op = lx->op;
		size_t opat = lx->start;
		if (next(lx) < 0) {
			free(field);
			return -1;
		}
		if (lx->tok != T_WORD && lx->tok != T_STR) {
			free(field);
			return lex_err(lx, opat, "a value must follow the operator");
		}
		value = lx->text;
		lx->text = NULL;
		vat = lx->start;
		if (next(lx) < 0) {
			free(field), free(value);
			return -1;
		}
	}
	if (!field) {
		struct enode n = {.kind = K_WORD, .str = word, .a = -1, .b = -1};
		return add_node(lx->f, n);
	}
	free(word);
	const struct xp_filter_field *fd = field_find(lx->fields, field);
	if (!fd) {
		char list[512];
		field_list(lx->fields, list, sizeof list);
		int r = *list ? lex_err(lx, at, "unknown field '%s' (fields: %s)", field, list)
			      : lex_err(lx, at, "unknown field '%s' (this view filters by words only)", field);
		free(field), free(value);
		return r;
	}
	struct enode n = {.kind = K_CMP, .op = (unsigned char)op, .field = field, .str = value, .a = -1, .b = -1};
	if (fd->numeric) {
		if (!parse_number(value, fd->unit, &n.num)) {
			int r = fd->unit ? lex_err(lx, vat, "'%s' is not a number for %s (in %s)", value, fd->name, fd->unit)
					 : lex_err(lx, vat, "'%s' is not a number for %s", value, fd->name);
			free(field), free(value);
			return r;
		}
		n.numeric = true;
	}
	lx->f->fields_used = true;
	if (is_device_field(field))
		lx->f->device_fields = true;
	return add_node(lx->f, n);
}

/* unary := '!' unary | '(' expr ')' | term */
static int parse_unary(struct lex *lx)
{
	if (++lx->depth > XP_FILTER_MAX_DEPTH)
		return lex_err(lx, lx->start, "nested deeper than %d", XP_FILTER_MAX_DEPTH);
	int r;
	if (lx->tok == T_NOT) {
		if (next(lx) < 0)
			return -1;
		int a = parse_unary(lx);
		if (a < 0)
			return -1;
		r = add_node(lx->f, (struct enode){.kind = K_NOT, .a = a, .b = -1});
	} else if (lx->tok == T_LP) {
		size_t open = lx->start;
		if (next(lx) < 0)
			return -1;
		r = parse_or(lx);
		if (r < 0)
			return -1;
		if (lx->tok != T_RP)
			return lex_err(lx, open, "'(' is not closed");
		if (next(lx) < 0)
			return -1;
	} else {
		r = parse_term(lx);
	}
	lx->depth--;
	return r;
}

/* and := unary ( ['&'] unary )*: two terms side by side mean both, as in a search box. */
static int parse_and(struct lex *lx)
{
	int a = parse_unary(lx);
	while (a >= 0 && (lx->tok == T_AND || lx->tok == T_NOT || lx->tok == T_LP || lx->tok == T_WORD ||
			  lx->tok == T_STR)) {
		if (lx->tok == T_AND && next(lx) < 0)
			return -1;
		int b = parse_unary(lx);
		if (b < 0)
			return -1;
		a = add_node(lx->f, (struct enode){.kind = K_AND, .a = a, .b = b});
	}
	return a;
}

static int parse_or(struct lex *lx)
{
	int a = parse_and(lx);
	while (a >= 0 && lx->tok == T_OR) {
		if (next(lx) < 0)
			return -1;
		int b = parse_and(lx);
		if (b < 0)
			return -1;
		a = add_node(lx->f, (struct enode){.kind = K_OR, .a = a, .b = b});
	}
	return a;
}

/* Refuses control characters and invalid UTF-8 before parsing, naming the column. */
static int check_bytes(struct lex *lx)
{
	const unsigned char *s = (const unsigned char *)lx->s;
	for (size_t i = 0; s[i];) {
		if (s[i] < 0x20 || s[i] == 0x7f)
			return lex_err(lx, i, "control character 0x%02x", s[i]);
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		size_t n = xp_utf8_len(s + i, strlen((const char *)s + i));
		if (!n)
			return lex_err(lx, i, "invalid UTF-8");
		i += n;
	}
	return 0;
}

struct xp_filter *xp_filter_compile(const char *expr, const struct xp_filter_field *fields, struct xp_err *err)
{
	if (!expr)
		expr = "";
	size_t len = strnlen(expr, XP_FILTER_MAX_LEN + 1);
	if (len > XP_FILTER_MAX_LEN) {
		xp_errf(err, "expression longer than %d bytes", XP_FILTER_MAX_LEN);
		return NULL;
	}
	struct xp_filter *f = xp_calloc(1, sizeof *f);
	struct lex lx = {.s = expr, .err = err, .fields = fields, .f = f};
	if (check_bytes(&lx) < 0)
		goto fail;
	if (next(&lx) < 0)
		goto fail;
	if (lx.tok == T_END) {
		xp_errf(err, "empty expression");
		goto fail;
	}
	f->root = parse_or(&lx);
	if (f->root < 0)
		goto fail;
	if (lx.tok != T_END) {
		if (lx.tok == T_RP)
			lex_err(&lx, lx.start, "')' without '('");
		else
			lex_err(&lx, lx.start, "unexpected '%.*s'", lx.tok == T_OP ? (int)(lx.pos - lx.start) : 1,
				lx.s + lx.start);
		goto fail;
	}
	free(lx.text);
	return f;
fail:
	free(lx.text);
	xp_filter_free(f);
	return NULL;
}

void xp_filter_free(struct xp_filter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->len; i++) {
		free(f->n[i].field);
		free(f->n[i].str);
	}
	free(f->n);
	free(f);
}

bool xp_filter_is_text(const struct xp_filter *f)
{
	return f && !f->fields_used;
}

/* ---- evaluation ---- */

/* Case-insensitive glob: '*' any run, '?' one byte; everything else literal. One remembered star
 * (the classic two-pointer loop): no recursion, no exponential blow-up on "*a*a*a*b". */
static bool glob(const char *p, const char *s)
{
	const char *star = NULL, *mark = NULL;
	while (*s) {
		if (*p == '*') {
			star = p++;
			mark = s;
		} else if (*p == '?' || (*p && tolower((unsigned char)*p) == tolower((unsigned char)*s))) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++mark;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

static bool cmp_num(int op, double a, double b)
{
	switch (op) {
	case OP_EQ: return a == b;
	case OP_NE: return a != b;
	case OP_LT: return a < b;
	case OP_LE: return a <= b;
	case OP_GT: return a > b;
	default: return a >= b;
	}
}

static bool eval_cmp(const struct enode *n, xp_filter_get get, void *row)
{
	struct xp_fval v = {XP_FV_NONE, 0, NULL};
	if (!get || !get(row, n->field, &v) || v.kind == XP_FV_NONE)
		return n->op == OP_NE; /* not known is not equal to anything, and nothing more */
	if (n->numeric) {
		double x = v.num;
		if (v.kind == XP_FV_STR) {
			char *end;
			x = v.str ? strtod(v.str, &end) : NAN;
			if (!v.str || end == v.str || *end)
				return n->op == OP_NE;
		}
		if (isnan(x))
			return n->op == OP_NE;
		return cmp_num(n->op, x, n->num);
	}
	char buf[64];
	const char *s = v.str;
	if (v.kind == XP_FV_NUM) {
		snprintf(buf, sizeof buf, "%g", v.num);
		s = buf;
	}
	if (!s)
		return n->op == OP_NE;
	switch (n->op) {
	case OP_EQ: return glob(n->str, s);
	case OP_NE: return !glob(n->str, s);
	default: return cmp_num(n->op, (double)strcasecmp(s, n->str), 0);
	}
}

static bool eval(const struct xp_filter *f, int i, xp_filter_get get, void *row, const char *text)
{
	const struct enode *n = &f->n[i];
	switch (n->kind) {
	case K_AND: return eval(f, n->a, get, row, text) && eval(f, n->b, get, row, text);
	case K_OR: return eval(f, n->a, get, row, text) || eval(f, n->b, get, row, text);
	case K_NOT: return !eval(f, n->a, get, row, text);
	case K_CMP: return eval_cmp(n, get, row);
	default: return text && strcasestr(text, n->str) != NULL;
	}
}

bool xp_filter_eval(const struct xp_filter *f, xp_filter_get get, void *row, const char *text)
{
	return !f || eval(f, f->root, get, row, text);
}

/* ---- nodes and devices ---- */

const struct xp_filter_field xp_filter_node_fields[] = {
	{"name", false, "the node's name", NULL},
	{"state", false, "up, degraded, draining, down, unreachable", NULL},
	{"health", false, "a device's health: ok, warn, fail, unknown (a node without devices: its state's)", NULL},
	{"model", false, "a device's model", NULL},
	{"vendor", false, "a device's vendor", NULL},
	{"arch", false, "a device's architecture or generation", NULL},
	{"driver", false, "a device's driver version", NULL},
	{"zone", false, "the node's zone", NULL},
	{"rack", false, "the node's rack", NULL},
	{"switch", false, "the node's switch", NULL},
	{"source", false, "where the node was read: local, an agent URL, snapshot", NULL},
	{"label.", false, "a label of the node (operators', discovery's or validation's)", NULL},
	{"util", true, "a device's utilization, percent", "%"},
	{"mem", true, "a device's memory in use", "MiB"},
	{"memtotal", true, "a device's memory", "MiB"},
	{"temp", true, "a device's temperature, degrees C", "C"},
	{"power", true, "a device's power draw, watts", "W"},
	{"numa", true, "a device's NUMA domain", NULL},
	{"ecc", true, "a device's uncorrected ECC errors", NULL},
	{"dev", true, "a device's index on its node", NULL},
	{"uuid", false, "a device's UUID or serial", NULL},
	{"free", true, "the node's free devices", NULL},
	{"devices", true, "the node's devices", NULL},
	{"cpus", true, "the node's logical CPUs", NULL},
	{NULL, false, NULL, NULL},
};

/* Appends s and a newline to the growing text *t of *len bytes (capacity *cap). */
static void text_add(char **t, size_t *len, size_t *cap, const char *s)
{
	if (!s || !*s)
		return;
	size_t n = strlen(s);
	xp_grow(t, 1, *len + n + 2, cap);
	memcpy(*t + *len, s, n);
	(*t)[*len + n] = '\n';
	*len += n + 1;
	(*t)[*len] = '\0';
}

static void text_labels(char **t, size_t *len, size_t *cap, const struct xp_labels *l)
{
	for (size_t i = 0; i < l->n; i++)
		text_add(t, len, cap, l->values[i]);
}

char *xp_filter_node_text(const struct xp_node *n)
{
	char *t = NULL;
	size_t len = 0, cap = 0;
	xp_grow(&t, 1, 1, &cap);
	t[0] = '\0';
	text_add(&t, &len, &cap, n->name);
	text_add(&t, &len, &cap, xp_node_state_name(n->state));
	for (size_t i = 0; i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		/* Devices of a node are mostly alike: a repeat of the previous one's is left out. */
		if (i && d->vendor == n->devices[i - 1].vendor && d->model == n->devices[i - 1].model &&
		    d->health == n->devices[i - 1].health)
			continue;
		text_add(&t, &len, &cap, d->vendor);
		text_add(&t, &len, &cap, d->model);
		if (d->health != XP_HEALTH_UNKNOWN)
			text_add(&t, &len, &cap, xp_health_name(d->health));
	}
	text_add(&t, &len, &cap, n->zone);
	text_add(&t, &len, &cap, n->rack);
	text_add(&t, &len, &cap, n->sw);
	text_labels(&t, &len, &cap, &n->facts);
	text_labels(&t, &len, &cap, &n->governance);
	text_labels(&t, &len, &cap, &n->validation);
	return t;
}

bool xp_device_is_free(const struct xp_node *n, const struct xp_device *d)
{
	return (n->state == XP_NODE_UP || n->state == XP_NODE_DEGRADED) && !d->n_allocs && d->health != XP_HEALTH_FAIL;
}

size_t xp_node_free_devices(const struct xp_node *n)
{
	size_t k = 0;
	for (size_t i = 0; i < n->n_devices; i++)
		k += xp_device_is_free(n, &n->devices[i]);
	return k;
}

struct nd_row {
	const struct xp_node *n;
	const struct xp_device *d; /* NULL: the node alone (no devices) */
};

static bool fv_str(struct xp_fval *v, const char *s)
{
	*v = (struct xp_fval){s ? XP_FV_STR : XP_FV_NONE, 0, s};
	return s != NULL;
}

static bool fv_num(struct xp_fval *v, double x)
{
	*v = (struct xp_fval){isnan(x) ? XP_FV_NONE : XP_FV_NUM, x, NULL};
	return !isnan(x);
}

static bool node_get(void *arg, const char *field, struct xp_fval *v)
{
	const struct nd_row *r = arg;
	const struct xp_node *n = r->n;
	const struct xp_device *d = r->d;
	if (!strncasecmp(field, "label.", 6)) {
		const char *k = field + 6, *s = xp_labels_get(&n->governance, k);
		if (!s)
			s = xp_labels_get(&n->facts, k);
		if (!s)
			s = xp_labels_get(&n->validation, k);
		return fv_str(v, s);
	}
	if (!strcasecmp(field, "name"))
		return fv_str(v, n->name);
	if (!strcasecmp(field, "state"))
		return fv_str(v, xp_node_state_name(n->state));
	if (!strcasecmp(field, "zone"))
		return fv_str(v, n->zone);
	if (!strcasecmp(field, "rack"))
		return fv_str(v, n->rack);
	if (!strcasecmp(field, "switch"))
		return fv_str(v, n->sw);
	if (!strcasecmp(field, "source"))
		return fv_str(v, n->source);
	if (!strcasecmp(field, "free"))
		return fv_num(v, (double)xp_node_free_devices(n));
	if (!strcasecmp(field, "devices"))
		return fv_num(v, (double)n->n_devices);
	if (!strcasecmp(field, "cpus"))
		return fv_num(v, n->pus > 0 ? n->pus : NAN);
	if (!strcasecmp(field, "health"))
		return fv_str(v, xp_health_name(d ? d->health : xp_node_state_level(n->state)));
	if (!d)
		return fv_str(v, NULL);
	if (!strcasecmp(field, "model"))
		return fv_str(v, d->model);
	if (!strcasecmp(field, "vendor"))
		return fv_str(v, d->vendor);
	if (!strcasecmp(field, "arch"))
		return fv_str(v, d->arch);
	if (!strcasecmp(field, "driver"))
		return fv_str(v, d->driver);
	if (!strcasecmp(field, "uuid"))
		return fv_str(v, d->uuid);
	if (!strcasecmp(field, "util"))
		return fv_num(v, d->utilization_pct);
	if (!strcasecmp(field, "mem"))
		return fv_num(v, d->memory_used_mib >= 0 ? (double)d->memory_used_mib : NAN);
	if (!strcasecmp(field, "memtotal"))
		return fv_num(v, d->memory_mib >= 0 ? (double)d->memory_mib : NAN);
	if (!strcasecmp(field, "temp"))
		return fv_num(v, d->temperature_c);
	if (!strcasecmp(field, "power"))
		return fv_num(v, d->power_w);
	if (!strcasecmp(field, "numa"))
		return fv_num(v, d->numa >= 0 ? d->numa : NAN);
	if (!strcasecmp(field, "ecc"))
		return fv_num(v, d->ecc_uncorrected >= 0 ? (double)d->ecc_uncorrected : NAN);
	if (!strcasecmp(field, "dev"))
		return fv_num(v, d->index);
	return fv_str(v, NULL);
}

bool xp_filter_device(const struct xp_filter *f, const struct xp_node *n, const struct xp_device *d,
		      const char *text)
{
	struct nd_row r = {n, d};
	return xp_filter_eval(f, node_get, &r, text ? text : n->name);
}

bool xp_filter_node(const struct xp_filter *f, const struct xp_node *n, const char *text)
{
	if (!f)
		return true;
	if (!text)
		text = n->name;
	/* Node fields and words alone: one evaluation. A device field makes the expression a
	 * question about one device at a time (`temp>85 & numa==0` is one device hot on NUMA 0,
	 * not a hot device and another on NUMA 0). */
	if (!f->device_fields || !n->n_devices)
		return xp_filter_device(f, n, NULL, text);
	for (size_t i = 0; i < n->n_devices; i++)
		if (xp_filter_device(f, n, &n->devices[i], text))
			return true;
	return false;
}
