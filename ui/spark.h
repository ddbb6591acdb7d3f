/* spark.h: a series of numbers as text: a one-row sparkline (▁▂▃▄▅▆▇█, or ASCII `_.-=#`) and a
 * multi-row graph of block columns (eighths), one column per value, a gap (XP_NA) as blank.
 * Pure functions on caller buffers: the map may draw thousands of them per frame. */
#ifndef XP_SPARK_H
#define XP_SPARK_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes a buffer needs for a sparkline of n values (UTF-8 glyphs are 3 bytes) plus the NUL. */
#define XP_SPARK_BYTES(n) ((n) * 3 + 1)

/* The smallest and largest value of v[0..n-1] that are not XP_NA into *lo and *hi; false (both
 * XP_NA) when there is none. */
bool xp_spark_range(const double *v, size_t n, double *lo, double *hi);
/* Writes v[0..n-1] as a sparkline into buf (len bytes, XP_SPARK_BYTES(n) is enough), one column
 * per value scaled between lo and hi (a value at lo is the lowest bar, never blank: blank is a
 * gap; lo >= hi or either XP_NA: the series' own range, a flat series at mid height); ascii picks
 * `_.-=#`. Returns the columns written (fewer when len is short). */
size_t xp_spark(const double *v, size_t n, double lo, double hi, bool ascii, char *buf, size_t len);
/* Writes v[0..n-1] as a graph `rows` rows high into lines[0..rows-1] (top row first, each
 * XP_SPARK_BYTES(n) bytes), a column per value filled from the bottom in eighths of a row
 * (ASCII: `#` for a full cell, `.` for a part), scaled as xp_spark does. */
void xp_graph(const double *v, size_t n, int rows, double lo, double hi, bool ascii, char **lines);

#endif
