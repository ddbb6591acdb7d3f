/* table.h: command output: aligned text tables (column widths from the contents) and --json documents. */
#ifndef XP_TABLE_H
#define XP_TABLE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* A table of strings; the first row added is the header. */
struct xp_table {
	size_t ncols, nrows, cap;
	char **cells; /* nrows x ncols, owned */
};

/* Starts an empty table of ncols columns. */
void xp_table_init(struct xp_table *t, size_t ncols);
/* Appends a row of exactly ncols strings; NULL cells print as "-". */
void xp_table_row(struct xp_table *t, ...);
/* Appends a row from an array of ncols strings (copied; NULL prints as "-"). */
void xp_table_rowv(struct xp_table *t, const char *const *cells);
/* Prints the table with two spaces between columns, each line after indent. */
void xp_table_print(const struct xp_table *t, FILE *f, const char *indent);
/* Frees the table's cells. */
void xp_table_free(struct xp_table *t);

/* Prints doc indented by two and a newline (the --json form of a listing), then drops the reference. */
void xp_print_json(FILE *f, json_t *doc);
/* Prints {"key": list} as xp_print_json does; takes the reference to list. */
void xp_print_json_list(FILE *f, const char *key, json_t *list);

#endif
