/* table.c: aligned text tables and --json documents. */
#include "table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "xp.h"

void xp_table_init(struct xp_table *t, size_t ncols)
{
	memset(t, 0, sizeof *t);
	t->ncols = ncols;
}

void xp_table_row(struct xp_table *t, ...)
{
	xp_grow(&t->cells, sizeof *t->cells * t->ncols, t->nrows, &t->cap);
	va_list ap;
	va_start(ap, t);
	for (size_t c = 0; c < t->ncols; c++) {
		const char *s = va_arg(ap, const char *);
		t->cells[t->nrows * t->ncols + c] = xp_strdup(s ? s : "-");
	}
	va_end(ap);
	t->nrows++;
}

void xp_table_rowv(struct xp_table *t, const char *const *cells)
{
	xp_grow(&t->cells, sizeof *t->cells * t->ncols, t->nrows, &t->cap);
	for (size_t c = 0; c < t->ncols; c++)
		t->cells[t->nrows * t->ncols + c] = xp_strdup(cells[c] ? cells[c] : "-");
	t->nrows++;
}

/* Display width of UTF-8 text, counting code points (continuation bytes add nothing). */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

void xp_table_print(const struct xp_table *t, FILE *f, const char *indent)
{
	size_t *wid = xp_calloc(t->ncols, sizeof *wid);
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			size_t w = width(t->cells[r * t->ncols + c]);
			if (w > wid[c])
				wid[c] = w;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		fputs(indent ? indent : "", f);
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			fputs(s, f);
			/* No trailing blanks after the last column. */
			if (c + 1 < t->ncols)
				fprintf(f, "%*s", (int)(wid[c] - width(s) + 2), "");
		}
		fputc('\n', f);
	}
	free(wid);
}

void xp_table_free(struct xp_table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof *t);
}

void xp_print_json(FILE *f, json_t *doc)
{
	json_dumpf(doc, f, JSON_INDENT(2));
	fputc('\n', f);
	json_decref(doc);
}

void xp_print_json_list(FILE *f, const char *key, json_t *list)
{
	json_t *doc = json_object();
	json_object_set_new(doc, key, list);
	xp_print_json(f, doc);
}
