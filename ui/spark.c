/* spark.c: sparklines and block graphs (spark.h). */
#include "spark.h"

#include <math.h>
#include <string.h>

static const char *const bars[9] = {" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587",
				    "\u2588"};
static const char ascii_bars[] = "_.-=#";

bool xp_spark_range(const double *v, size_t n, double *lo, double *hi)
{
	*lo = *hi = NAN;
	for (size_t i = 0; i < n; i++) {
		if (isnan(v[i]))
			continue;
		if (isnan(*lo) || v[i] < *lo)
			*lo = v[i];
		if (isnan(*hi) || v[i] > *hi)
			*hi = v[i];
	}
	return !isnan(*lo);
}

/* Where v sits between lo and hi, 0..1; a flat scale puts everything at half. */
static double frac(double v, double lo, double hi)
{
	if (!(hi > lo))
		return 0.5;
	double f = (v - lo) / (hi - lo);
	return f < 0 ? 0 : f > 1 ? 1 : f;
}

/* The scale to use: the caller's when it is one, else the series' own. */
static void scale(const double *v, size_t n, double *lo, double *hi)
{
	if (isnan(*lo) || isnan(*hi) || !(*hi > *lo) || isinf(*lo) || isinf(*hi))
		xp_spark_range(v, n, lo, hi);
}

static size_t put(char *buf, size_t len, size_t at, const char *s)
{
	size_t k = strlen(s);
	if (at + k + 1 > len)
		return 0;
	memcpy(buf + at, s, k + 1);
	return k;
}

size_t xp_spark(const double *v, size_t n, double lo, double hi, bool ascii, char *buf, size_t len)
{
	if (!len)
		return 0;
	buf[0] = '\0';
	scale(v, n, &lo, &hi);
	size_t at = 0, cols = 0;
	for (size_t i = 0; i < n; i++) {
		char a[2] = " ";
		const char *g = " ";
		if (!isnan(v[i])) {
			double f = frac(v[i], lo, hi);
			if (ascii) {
				a[0] = ascii_bars[(int)lround(f * (double)(sizeof ascii_bars - 2))];
				g = a;
			} else {
				g = bars[1 + (int)lround(f * 7)];
			}
		}
		size_t k = put(buf, len, at, g);
		if (!k)
			break;
		at += k;
		cols++;
	}
	return cols;
}

void xp_graph(const double *v, size_t n, int rows, double lo, double hi, bool ascii, char **lines)
{
	if (rows < 1)
		return;
	scale(v, n, &lo, &hi);
	size_t cap = XP_SPARK_BYTES(n);
	for (int r = 0; r < rows; r++) {
		size_t at = 0;
		lines[r][0] = '\0';
		long below = (long)(rows - 1 - r) * 8; /* eighths under this row */
		for (size_t i = 0; i < n; i++) {
			/* Eighths filled from the bottom; a known value shows at least one. */
			long cell = 0;
			if (!isnan(v[i])) {
				long fill = lround(frac(v[i], lo, hi) * rows * 8);
				cell = (fill < 1 ? 1 : fill) - below;
				cell = cell < 0 ? 0 : cell > 8 ? 8 : cell;
			}
			const char *g = ascii ? (cell == 8 ? "#" : cell > 0 ? "." : " ") : bars[cell];
			at += put(lines[r], cap, at, g);
		}
	}
}
