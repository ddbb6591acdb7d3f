/* matrix_layout.c: marks, widths, scrolling and filtering of the validation grid. */
#include "matrix_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "draw.h"
#include "theme.h"
#include "xp.h"

/* ---- marks ---- */

const char *xp_mx_mark(int status, bool utf8)
{
	switch (status) {
	case XP_V_PASS:
		return utf8 ? "\u2713" : "P";
	case XP_V_FAIL:
		return utf8 ? "\u2717" : "F";
	case XP_V_STALE:
		return utf8 ? "~" : "S";
	default:
		return utf8 ? "\u00b7" : ".";
	}
}

int xp_mx_role(int status)
{
	switch (status) {
	case XP_V_PASS:
		return XP_ROLE_OK;
	case XP_V_FAIL:
		return XP_ROLE_FAIL;
	case XP_V_STALE:
		return XP_ROLE_WARN;
	default:
		return XP_ROLE_DIM;
	}
}

const char *xp_mx_marks(const struct xp_cell *cell, bool utf8, char *buf, size_t len)
{
	size_t used = 0;
	if (len)
		buf[0] = '\0';
	for (int l = 0; l < XP_LAYER_COUNT && len; l++) {
		const char *m = xp_mx_mark(cell->layers[l].status, utf8);
		size_t n = strlen(m);
		if (used + n >= len)
			break;
		memcpy(buf + used, m, n + 1);
		used += n;
	}
	return buf;
}

unsigned xp_mx_cell_statuses(const struct xp_cell *cell)
{
	unsigned bits = 0;
	for (int l = 0; l < XP_LAYER_COUNT; l++) {
		int s = cell->layers[l].status;
		if (s >= 0 && s < XP_V_COUNT)
			bits |= 1u << s;
	}
	return bits;
}

bool xp_mx_cell_accepted(const struct xp_cell *cell)
{
	return xp_mx_cell_statuses(cell) == 1u << XP_V_PASS;
}

bool xp_mx_cell_failed(const struct xp_cell *cell)
{
	return (xp_mx_cell_statuses(cell) & 1u << XP_V_FAIL) != 0;
}

const struct xp_cell *xp_mx_cell(const struct xp_matrix *m, size_t env, size_t kase)
{
	return &m->cells[env * m->n_cases + kase];
}

/* ---- widths ---- */

int xp_mx_cols(const char *s)
{
	int c = 0;
	for (; s && *s; s++)
		c += ((unsigned char)*s & 0xc0) != 0x80;
	return c;
}

const char *xp_mx_truncate(const char *s, int width, const char *ellipsis, char *buf, size_t len)
{
	return xp_draw_cut(s, width, XP_CUT_END, ellipsis, buf, len);
}

int xp_mx_case_width(const char *name)
{
	int w = xp_mx_cols(name);
	return w < XP_MX_CASE_MIN ? XP_MX_CASE_MIN : w > XP_MX_CASE_MAX ? XP_MX_CASE_MAX : w;
}

int xp_mx_env_width(int widest, int avail, int rest)
{
	int w = widest;
	int cap = avail - rest > avail / 2 ? avail - rest : avail / 2;
	if (w > cap)
		w = cap;
	return w < XP_MX_ENV_MIN ? XP_MX_ENV_MIN : w;
}

void xp_mx_env_common(const char *const *ids, size_t n, size_t *pre, size_t *suf)
{
	*pre = *suf = 0;
	if (n < 2)
		return;
	size_t p = strlen(ids[0]), s = p, shortest = p;
	for (size_t i = 1; i < n; i++) {
		size_t len = strlen(ids[i]), k = 0;
		while (k < p && k < len && ids[i][k] == ids[0][k])
			k++;
		p = k;
		size_t l0 = strlen(ids[0]);
		k = 0;
		while (k < s && k < len && k < l0 && ids[i][len - 1 - k] == ids[0][l0 - 1 - k])
			k++;
		s = k;
		if (len < shortest)
			shortest = len;
	}
	/* Back to field boundaries: the prefix ends just after a ':', the suffix starts at one. */
	while (p > 0 && ids[0][p - 1] != ':')
		p--;
	size_t l0 = strlen(ids[0]);
	while (s > 0 && ids[0][l0 - s] != ':')
		s--;
	/* Identical ids, or one the other's start: nothing to keep between them. */
	if (p + s >= shortest)
		p = s = 0;
	*pre = p;
	*suf = s;
}

const char *xp_mx_env_cut(const char *id, int width, size_t pre, size_t suf, const char *ellipsis, char *buf,
			  size_t len)
{
	size_t n = strlen(id);
	if (xp_draw_width(id) <= width || (!pre && !suf) || pre + suf >= n)
		return xp_draw_cut(id, width, XP_CUT_MIDDLE, ellipsis, buf, len);
	char *head = xp_strndup(id, pre), *mid = xp_strndup(id + pre, n - pre - suf);
	const char *tail = id + n - suf;
	int hw = xp_draw_width(head), mw = xp_draw_width(mid), ew = xp_draw_width(ellipsis);
	int marks = (pre ? ew : 0) + (suf ? ew : 0);
	char hb[512], mb[512], tb[512];
	if (mw > width - marks) {
		/* The difference alone is too wide: it keeps both of its ends. */
		snprintf(hb, sizeof hb, "%s", pre ? ellipsis : "");
		xp_draw_cut(mid, width - marks, XP_CUT_MIDDLE, ellipsis, mb, sizeof mb);
		snprintf(tb, sizeof tb, "%s", suf ? ellipsis : "");
	} else {
		int left = width - mw;
		snprintf(mb, sizeof mb, "%s", mid);
		if (hw + (suf ? ew : 0) <= left) {
			/* The shared start whole ("vendor:model:"), the shared end cut after its start. */
			snprintf(hb, sizeof hb, "%s", head);
			xp_draw_cut(tail, left - hw, XP_CUT_END, ellipsis, tb, sizeof tb);
		} else {
			snprintf(tb, sizeof tb, "%s", suf ? ellipsis : "");
			xp_draw_cut(head, left - (suf ? ew : 0), XP_CUT_START, ellipsis, hb, sizeof hb);
		}
	}
	snprintf(buf, len, "%s%s%s", hb, mb, tb);
	free(head);
	free(mid);
	return buf;
}

/* ---- sideways scrolling ---- */

size_t xp_mx_fit(const int *widths, size_t n, size_t left, int avail, int gap)
{
	size_t k = 0;
	int used = 0;
	for (size_t i = left; i < n; i++) {
		int need = widths[i] + (k ? gap : 0);
		if (k && used + need > avail)
			break;
		used += need;
		k++;
	}
	return k;
}

size_t xp_mx_scroll_left(const int *widths, size_t n, size_t left, size_t cursor, int avail, int gap)
{
	if (!n)
		return 0;
	if (cursor >= n)
		cursor = n - 1;
	if (left > cursor)
		left = cursor;
	while (left < cursor && left + xp_mx_fit(widths, n, left, avail, gap) <= cursor)
		left++;
	/* After a widening or a narrower filter, pull the columns back so that the last one
	 * ends the row rather than leaving blank room at the right. */
	while (left > 0 && xp_mx_fit(widths, n, left - 1, avail, gap) == n - (left - 1))
		left--;
	return left;
}

/* ---- filtering ---- */

int xp_mx_status_word(const char *text)
{
	if (!text)
		return -1;
	for (int s = 0; s < XP_V_COUNT; s++)
		if (strcasecmp(text, xp_vstatus_name(s)) == 0)
			return s;
	return -1;
}

struct substr {
	const char *filter;
};

static bool substr_match(const char *text, void *arg)
{
	const struct substr *s = arg;
	return text && strcasestr(text, s->filter) != NULL;
}

void xp_mx_shown_free(struct xp_mx_shown *sh)
{
	free(sh->rows);
	free(sh->cols);
	free(sh->row_ok);
	free(sh->row_fail);
	free(sh->col_ok);
	free(sh->col_fail);
	memset(sh, 0, sizeof *sh);
}

static void set_all(bool *on, size_t n)
{
	for (size_t i = 0; i < n; i++)
		on[i] = true;
}

/* Keeps the rows and columns whose flag is set; both flag arrays are the caller's. */
static void keep(struct xp_mx_shown *sh, const struct xp_matrix *m, const bool *env_on, const bool *case_on)
{
	for (size_t e = 0; e < m->n_envs; e++)
		if (env_on[e])
			sh->rows[sh->n_rows++] = e;
	for (size_t c = 0; c < m->n_cases; c++)
		if (case_on[c])
			sh->cols[sh->n_cols++] = c;
}

void xp_mx_shown_build(struct xp_mx_shown *sh, const struct xp_matrix *m, const char *filter, xp_mx_pred match,
		       void *arg)
{
	xp_mx_shown_free(sh);
	/* One more than needed, so that an empty matrix still allocates and nothing is NULL. */
	sh->rows = xp_calloc(m->n_envs + 1, sizeof *sh->rows);
	sh->cols = xp_calloc(m->n_cases + 1, sizeof *sh->cols);
	bool *env_on = xp_calloc(m->n_envs + 1, sizeof *env_on);
	bool *case_on = xp_calloc(m->n_cases + 1, sizeof *case_on);
	struct substr sub = {filter};
	if (!match) {
		match = substr_match;
		arg = &sub;
	}
	int status = xp_mx_status_word(filter);
	if (!filter || !*filter) {
		set_all(env_on, m->n_envs);
		set_all(case_on, m->n_cases);
	} else if (status >= 0) {
		/* A cell with a layer in that status keeps both its row and its column: the shown
		 * grid then holds every such cell and nothing that has none. */
		for (size_t e = 0; e < m->n_envs; e++)
			for (size_t c = 0; c < m->n_cases; c++)
				if (xp_mx_cell_statuses(xp_mx_cell(m, e, c)) & 1u << status)
					env_on[e] = case_on[c] = true;
	} else {
		bool any_env = false, any_case = false;
		for (size_t e = 0; e < m->n_envs; e++) {
			env_on[e] = match(m->envs[e].id, arg);
			any_env = any_env || env_on[e];
		}
		for (size_t c = 0; c < m->n_cases; c++) {
			case_on[c] = match(m->cases[c].name, arg) || (m->cases[c].team && match(m->cases[c].team, arg));
			any_case = any_case || case_on[c];
		}
		/* "nvidia" names environments only: hiding every case would show nothing at all. */
		if (any_env && !any_case)
			set_all(case_on, m->n_cases);
		if (any_case && !any_env)
			set_all(env_on, m->n_envs);
	}
	keep(sh, m, env_on, case_on);
	free(env_on);
	free(case_on);

	sh->row_ok = xp_calloc(sh->n_rows + 1, sizeof *sh->row_ok);
	sh->row_fail = xp_calloc(sh->n_rows + 1, sizeof *sh->row_fail);
	sh->col_ok = xp_calloc(sh->n_cols + 1, sizeof *sh->col_ok);
	sh->col_fail = xp_calloc(sh->n_cols + 1, sizeof *sh->col_fail);
	for (size_t i = 0; i < sh->n_rows; i++) {
		char *shown = xp_env_id_show(m->envs[sh->rows[i]].id); /* as drawn: "-" for an empty field */
		int w = xp_mx_cols(shown);
		free(shown);
		if (w > sh->env_widest)
			sh->env_widest = w;
		for (size_t j = 0; j < sh->n_cols; j++) {
			const struct xp_cell *cell = xp_mx_cell(m, sh->rows[i], sh->cols[j]);
			if (xp_mx_cell_accepted(cell)) {
				sh->row_ok[i]++;
				sh->col_ok[j]++;
				sh->ok++;
			}
			if (xp_mx_cell_failed(cell)) {
				sh->row_fail[i]++;
				sh->col_fail[j]++;
				sh->fail++;
			}
		}
	}
}

long xp_mx_find_env(const struct xp_matrix *m, const struct xp_mx_shown *sh, const char *id)
{
	for (size_t i = 0; id && i < sh->n_rows; i++)
		if (strcmp(m->envs[sh->rows[i]].id, id) == 0)
			return (long)i;
	return -1;
}

long xp_mx_find_case(const struct xp_matrix *m, const struct xp_mx_shown *sh, const char *name)
{
	for (size_t j = 0; name && j < sh->n_cols; j++)
		if (strcmp(m->cases[sh->cols[j]].name, name) == 0)
			return (long)j;
	return -1;
}
