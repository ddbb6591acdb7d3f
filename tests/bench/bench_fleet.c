/* bench_fleet.c: how fast the fleet heatmap (view 8) answers at 10,000 nodes x 8 devices in
 * 250 racks, in process on a 200x50 ncurses screen that writes to /dev/null:
 *  - a cursor key (Right, Down) and the frame after it (draw + doupdate): the layout is kept,
 *    a frame draws one screen of cells;
 *  - the metric key m: values, levels and the layout made again, then the frame;
 *  - new data (on_data with a new generation), then the frame (on_data alone only marks the
 *    layout stale: a refresh costs nothing while another view is shown).
 * The target is under 5 ms a frame; a miss prints FAIL, and only a miss by more than
 * SLACK times fails the run (machines are noisy). */
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "glyphs.h"
#include "layout.h"
#include "model.h"
#include "testlib.h"
#include "theme.h"
#include "ui.h"
#include "view.h"
#include "xp.h"

#define N_NODES 10000
#define N_DEV 8
#define N_RACKS 250
#define ROWS 50
#define COLS 200
#define FRAMES 2000
#define TARGET_FRAME_MS 5.0
#define SLACK 3.0

/* The app's accessors the view uses (ui.h keeps struct xp_ui opaque; app.o is not linked). */
struct xp_ui {
	const struct xp_cluster *c;
	const struct xp_glyphs *g;
	char filter[256];
	int opened;
};

const struct xp_cluster *xp_ui_cluster(const struct xp_ui *ui)
{
	return ui->c;
}

const char *xp_ui_filter(const struct xp_ui *ui)
{
	return ui->filter;
}

const struct xp_glyphs *xp_ui_glyphs(const struct xp_ui *ui)
{
	return ui->g;
}

bool xp_ui_matches(const struct xp_ui *ui, const char *text)
{
	return !ui->filter[0] || (text && strcasestr(text, ui->filter) != NULL);
}

bool xp_ui_open_node(struct xp_ui *ui, const char *name)
{
	(void)name;
	ui->opened++;
	return true;
}

extern const struct xp_view xp_view_fleet;

static struct xp_cluster *make_cluster(void)
{
	struct xp_cluster *c = xp_cluster_new();
	uint64_t r = 88172645463325252ULL;
	for (size_t i = 0; i < N_NODES; i++) {
		char name[32], rack[32];
		snprintf(name, sizeof name, "n%05zu", i);
		snprintf(rack, sizeof rack, "rack%03zu", i % N_RACKS);
		struct xp_node *n = xp_node_new(name);
		n->rack = xp_strdup(rack);
		n->state = XP_NODE_UP;
		for (int j = 0; j < N_DEV; j++) {
			struct xp_device *d = xp_node_add_device(n);
			r ^= r << 13, r ^= r >> 7, r ^= r << 17;
			d->utilization_pct = (double)(r % 101);
			d->temperature_c = 30 + (double)(r % 60);
			d->power_w = 100 + (double)(r % 600);
			d->power_limit_w = 700;
			d->memory_mib = 81920;
			d->memory_used_mib = (int64_t)(r % 81920);
			d->health = r % 97 ? XP_HEALTH_OK : XP_HEALTH_WARN;
		}
		xp_cluster_add(c, n);
	}
	return c;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, xp_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(void)
{
	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "");
	struct xp_cluster *c = make_cluster();
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *scr = out && in ? newterm("xterm-256color", out, in) : NULL;
	if (!scr) {
		fprintf(stderr, "bench_fleet: no ncurses screen for xterm-256color\n");
		return 1;
	}
	set_term(scr);
	resizeterm(ROWS, COLS);
	struct xp_theme th;
	xp_theme_default(&th);
	xp_theme_apply(&th, true);
	static struct xp_ui ui;
	ui.c = c;
	ui.g = xp_glyphs_pick(false);
	struct xp_rect body = xp_layout_frame(ROWS, COLS).body;
	const struct xp_view *v = &xp_view_fleet;
	void *st = v->create(&ui);
	v->draw(st, &ui, stdscr, body);

	static double key[FRAMES], metric[60], data[20];
	for (int i = 0; i < FRAMES; i++) {
		double t0 = xp_now_ms();
		v->on_key(st, &ui, i % 10 == 9 ? KEY_DOWN : KEY_RIGHT);
		v->draw(st, &ui, stdscr, body);
		wnoutrefresh(stdscr);
		doupdate();
		key[i] = xp_now_ms() - t0;
	}
	for (int i = 0; i < 60; i++) {
		double t0 = xp_now_ms();
		v->on_key(st, &ui, 'm');
		v->draw(st, &ui, stdscr, body);
		wnoutrefresh(stdscr);
		doupdate();
		metric[i] = xp_now_ms() - t0;
	}
	for (int i = 0; i < 20; i++) {
		c->generation++;
		double t0 = xp_now_ms();
		v->on_data(st, &ui);
		v->draw(st, &ui, stdscr, body);
		wnoutrefresh(stdscr);
		doupdate();
		data[i] = xp_now_ms() - t0;
	}
	v->destroy(st);
	endwin();
	delscreen(scr);
	fclose(out);
	fclose(in);
	xp_cluster_free(c);

	double k = median(key, FRAMES), m = median(metric, 60), d = median(data, 20);
	printf("bench_fleet: %d nodes x %d devices, %d racks, %dx%d\n", N_NODES, N_DEV, N_RACKS, COLS, ROWS);
	printf("  cursor key + frame   median %.3f ms  (target < %.1f ms) %s\n", k, TARGET_FRAME_MS,
	       k < TARGET_FRAME_MS ? "ok" : "FAIL");
	printf("  metric m (levels)    median %.3f ms\n", m);
	printf("  new data (layout)    median %.3f ms\n", d);
	return k > TARGET_FRAME_MS * SLACK ? 1 : 0;
}
