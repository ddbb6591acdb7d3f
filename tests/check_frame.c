/* check_frame.c: the console frame's layout arithmetic, glyph choice and the event log. */
#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "problems.h"
#include "glyphs.h"
#include "layout.h"
#include "suitelib.h"

START_TEST(frame_layout)
{
	struct xp_layout l = xp_layout_frame(24, 80);
	ck_assert(!l.too_small);
	ck_assert_int_eq(l.header.y, 0);
	ck_assert_int_eq(l.tabs.y, 1);
	ck_assert_int_eq(l.body.y, 2);
	ck_assert_int_eq(l.body.h, 21);
	ck_assert_int_eq(l.status.y, 23);
	ck_assert_int_eq(l.status.w, 80);
	ck_assert(xp_layout_frame(23, 80).too_small);
	ck_assert(xp_layout_frame(24, 79).too_small);
	ck_assert(xp_layout_frame(0, 0).too_small);
	l = xp_layout_frame(50, 200);
	ck_assert_int_eq(l.body.h + 3, 50);
}
END_TEST

START_TEST(tab_positions)
{
	const char *labels[] = {"1 Topology", "2 Queues", "3 Placement", "4 Validation", "5 Events"};
	struct xp_tab_pos pos[5];
	ck_assert_int_eq(xp_layout_tabs(labels, 5, 80, pos), 5);
	ck_assert_int_eq(pos[0].x, 1);
	ck_assert_int_eq(pos[0].w, 12);
	ck_assert_int_eq(pos[1].x, 14);
	/* A narrow bar drops the tabs that do not fit instead of overlapping them. */
	ck_assert_int_eq(xp_layout_tabs(labels, 5, 30, pos), 2);
	ck_assert_int_eq(xp_layout_tabs(labels, 5, 0, pos), 0);
}
END_TEST

START_TEST(scrolling)
{
	ck_assert_int_eq(xp_layout_scroll(0, 5, 10, 100), 0);
	ck_assert_int_eq(xp_layout_scroll(0, 10, 10, 100), 1);   /* just below: move by one */
	ck_assert_int_eq(xp_layout_scroll(50, 20, 10, 100), 20); /* above: cursor on top */
	ck_assert_int_eq(xp_layout_scroll(95, 99, 10, 100), 90); /* no blank rows at the end */
	ck_assert_int_eq(xp_layout_scroll(0, 3, 10, 4), 0);
	ck_assert_int_eq(xp_layout_scroll(7, 500, 10, 100), 90); /* cursor clamped */
	ck_assert_int_eq(xp_layout_scroll(7, 0, 0, 100), 0);
}
END_TEST

START_TEST(glyph_sets)
{
	ck_assert(xp_glyphs_pick(true) == &xp_glyphs_ascii);
	setlocale(LC_ALL, "C");
	ck_assert(xp_glyphs_pick(false) == &xp_glyphs_ascii);
	if (setlocale(LC_ALL, "C.UTF-8"))
		ck_assert(xp_glyphs_pick(false) == &xp_glyphs_utf8);
	setlocale(LC_ALL, "C");
	/* Every ASCII glyph is ASCII: the LANG=C screen must hold no UTF-8. */
	const struct xp_glyphs *g = &xp_glyphs_ascii;
	const char *all[] = {g->hline, g->vline, g->tl, g->tr, g->bl, g->br, g->unknown, g->nohealth, g->held, g->fail,
			     g->warn, g->down, g->stale, g->arrow, g->tree_mid, g->tree_last, g->tree_pipe, g->ellipsis};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		for (const char *p = all[i]; *p; p++)
			ck_assert_msg((unsigned char)*p < 0x80, "glyph %zu is not ASCII", i);
	ck_assert_int_eq(xp_glyph_level(0), 0);
	ck_assert_int_eq(xp_glyph_level(0.5), 1); /* busy, however little, never looks idle */
	ck_assert_int_eq(xp_glyph_level(50), 5);
	ck_assert_int_eq(xp_glyph_level(100), 8);
	ck_assert_int_eq(xp_glyph_level(NAN), 0);
}
END_TEST

static struct xp_node *node(const char *name, int ndev)
{
	struct xp_node *n = xp_node_new(name);
	for (int i = 0; i < ndev; i++) {
		struct xp_device *d = xp_node_add_device(n);
		char bus[32];
		snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x10 + i);
		d->pci_bus_id = xp_strdup(bus);
		d->vendor = xp_strdup("NVIDIA");
		d->model = xp_strdup("H100");
		d->health = XP_HEALTH_OK;
	}
	return n;
}

/* Every kind of device cell has a legend entry, and no two share both glyph and colour; a down or
 * unreachable node's cells share a glyph with no other kind (nor any utilization level): NO_COLOR
 * and mono themes tell them apart by the glyph alone (a down node's cells are not idle ones). */
START_TEST(glyph_cells)
{
	const struct xp_glyphs *sets[] = {&xp_glyphs_utf8, &xp_glyphs_ascii};
	size_t n = 0;
	while (xp_glyph_cells[n].name)
		n++;
	ck_assert_uint_ge(n, 8);
	for (size_t s = 0; s < 2; s++)
		for (size_t i = 0; i < n; i++) {
			const struct xp_glyph_cell *a = &xp_glyph_cells[i];
			ck_assert(a->meaning && a->count >= 1);
			for (int gi = 0; gi < a->count; gi++) {
				const char *ga = xp_glyph_at(sets[s], a->offset, gi);
				ck_assert(ga && *ga);
				for (size_t j = i + 1; j < n; j++) {
					const struct xp_glyph_cell *b = &xp_glyph_cells[j];
					/* No two kinds share a glyph, not even in different colours:
					 * without colour they could not be told apart. */
					for (int gj = 0; gj < b->count; gj++)
						ck_assert_msg(strcmp(ga, xp_glyph_at(sets[s], b->offset, gj)) != 0,
							      "%s and %s share a glyph", a->name, b->name);
				}
			}
		}
	ck_assert_str_eq(xp_glyphs_ascii.down, "x");
	ck_assert_str_eq(xp_glyphs_ascii.stale, "?");
}
END_TEST

START_TEST(event_diff)
{
	struct xp_event_log log;
	xp_event_log_init(&log, 100);
	struct xp_cluster *a = xp_cluster_new();
	xp_cluster_add(a, node("n1", 2));
	xp_cluster_add(a, node("n2", 1));
	ck_assert_uint_eq(xp_events_diff(NULL, a, 100, &log), 2);
	ck_assert_str_eq(xp_event_get(&log, 0)->node, "n1");
	ck_assert_ptr_nonnull(strstr(xp_event_get(&log, 0)->msg, "node discovered: 2 accelerators"));

	/* n1 loses a device and another turns to fail; n2 leaves; n3 arrives. */
	struct xp_cluster *b = xp_cluster_new();
	struct xp_node *n1 = node("n1", 2);
	n1->devices[1].health = XP_HEALTH_FAIL;
	xp_strv_add(&n1->devices[1].health_reasons, &n1->devices[1].n_health_reasons, "XID 79");
	free(n1->devices[0].pci_bus_id);
	n1->devices[0].pci_bus_id = xp_strdup("0000:99:00.0");
	n1->state = XP_NODE_DEGRADED;
	xp_cluster_add(b, n1);
	xp_cluster_add(b, node("n3", 0));
	size_t k = xp_events_diff(a, b, 200, &log);
	/* appeared (99:00.0), disappeared (10:00.0), n3 new, n2 gone, and n1's two new problems
	 * (degraded, ACC1 failed) as `health` words them */
	ck_assert_uint_eq(k, 6);
	int fails = 0, warns = 0;
	bool saw_reason = false, saw_gone = false;
	for (size_t i = 2; i < log.n; i++) {
		const struct xp_event *e = xp_event_get(&log, i);
		ck_assert_int_eq((int)e->time, 200);
		fails += e->severity == XP_SEV_FAIL;
		warns += e->severity == XP_SEV_WARN;
		saw_reason |= e->severity == XP_SEV_FAIL && strcmp(e->msg, "ACC1 XID 79") == 0;
		saw_gone |= strcmp(e->node, "n2") == 0 && strstr(e->msg, "left") != NULL;
	}
	ck_assert(saw_reason);
	ck_assert(saw_gone);
	ck_assert_int_eq(warns, 1); /* degraded */
	ck_assert_int_eq(fails, 3); /* health fail, device gone, node gone */
	/* No change, no events. */
	ck_assert_uint_eq(xp_events_diff(b, b, 300, &log), 0);
	/* A number moving in a reason is no new problem (a temperature, an agent error's "after N
	 * ms"): no event, or a refresh a second would flood the log; other words are one. */
	struct xp_cluster *b2 = xp_cluster_new();
	struct xp_node *m = node("n1", 2);
	m->state = XP_NODE_DEGRADED;
	free(m->devices[0].pci_bus_id);
	m->devices[0].pci_bus_id = xp_strdup("0000:99:00.0");
	m->devices[1].health = XP_HEALTH_FAIL;
	xp_strv_add(&m->devices[1].health_reasons, &m->devices[1].n_health_reasons, "XID 48");
	xp_cluster_add(b2, m);
	xp_cluster_add(b2, node("n3", 0));
	ck_assert_uint_eq(xp_events_diff(b, b2, 300, &log), 0);
	free(m->devices[1].health_reasons[0]);
	m->devices[1].health_reasons[0] = xp_strdup("XID 48 again");
	ck_assert_uint_eq(xp_events_diff(b, b2, 300, &log), 2); /* the new words, the old resolved */
	xp_cluster_free(b2);
	/* Back to a: n1's problems clear, each an info "resolved" with the same words. */
	size_t before = log.n;
	xp_events_diff(b, a, 400, &log);
	int resolved = 0;
	for (size_t i = before; i < log.n; i++) {
		const struct xp_event *e = xp_event_get(&log, i);
		if (strncmp(e->msg, "resolved: ", 10) == 0) {
			ck_assert_int_eq(e->severity, XP_SEV_INFO);
			ck_assert(strcmp(e->msg + 10, "ACC1 XID 79") == 0 || strcmp(e->msg + 10, "node degraded") == 0);
			resolved++;
		}
	}
	ck_assert_int_eq(resolved, 2);
	xp_cluster_free(a);
	xp_cluster_free(b);
	xp_event_log_free(&log);
}
END_TEST

/* At start every problem there is (the list `health` prints, from the same function) is an
 * event of its level, worded alike, after the discoveries, so the newest events are problems. */
START_TEST(event_problems_at_start)
{
	struct xp_event_log log;
	xp_event_log_init(&log, 100);
	struct xp_cluster *c = xp_cluster_new();
	struct xp_node *n1 = node("n1", 2);
	n1->state = XP_NODE_DEGRADED;
	n1->devices[1].health = XP_HEALTH_FAIL;
	xp_strv_add(&n1->devices[1].health_reasons, &n1->devices[1].n_health_reasons, "XID 79");
	n1->devices[0].health = XP_HEALTH_WARN; /* no reason given */
	xp_strv_add(&n1->warnings, &n1->n_warnings, "PCI and runtime disagree");
	xp_cluster_add(c, n1);
	struct xp_node *n2 = node("n2", 1);
	n2->state = XP_NODE_DOWN;
	xp_cluster_add(c, n2);
	xp_cluster_add(c, node("n3", 1));
	size_t k = xp_events_diff(NULL, c, 100, &log);
	struct xp_problem *p = NULL;
	size_t np = 0;
	for (size_t i = 0; i < c->n_nodes; i++)
		xp_node_problems(c->nodes[i], &p, &np, NULL);
	ck_assert_uint_eq(np, 5);
	ck_assert_uint_eq(k, 3 + np);
	for (size_t i = 0; i < np; i++) {
		const struct xp_event *e = xp_event_get(&log, 3 + i);
		char text[192];
		ck_assert_str_eq(e->node, p[i].node);
		ck_assert_str_eq(e->msg, xp_problem_text(&p[i], text, sizeof text));
		ck_assert_int_eq(e->severity, p[i].level == XP_HEALTH_FAIL ? XP_SEV_FAIL : XP_SEV_WARN);
	}
	ck_assert_str_eq(xp_event_get(&log, 3)->msg, "node degraded");
	ck_assert_int_eq(xp_event_get(&log, 3)->severity, XP_SEV_WARN);
	ck_assert_str_eq(xp_event_get(&log, 7)->msg, "node down");
	ck_assert_int_eq(xp_event_get(&log, 7)->severity, XP_SEV_FAIL);
	free(p);
	xp_cluster_free(c);
	xp_event_log_free(&log);
}
END_TEST

START_TEST(event_ring)
{
	struct xp_event_log log;
	xp_event_log_init(&log, 3);
	for (int i = 0; i < 5; i++)
		xp_event_add(&log, i, XP_SEV_INFO, "n", "event %d", i);
	ck_assert_uint_eq(log.n, 3);
	ck_assert_str_eq(xp_event_get(&log, 0)->msg, "event 2"); /* the oldest two were dropped */
	ck_assert_str_eq(xp_event_get(&log, 2)->msg, "event 4");
	ck_assert_ptr_null(xp_event_get(&log, 3));
	char longnode[300];
	memset(longnode, 'x', sizeof longnode - 1);
	longnode[sizeof longnode - 1] = '\0';
	xp_event_add(&log, 9, XP_SEV_WARN, longnode, "%s", longnode);
	ck_assert_uint_eq(strlen(xp_event_get(&log, 2)->node), sizeof xp_event_get(&log, 2)->node - 1);
	/* Time order, not arrival order: an older event (an audit row from before the console
	 * started) goes in its place, the oldest dropped; one older than all of a full log is not kept. */
	xp_event_add(&log, 4, XP_SEV_INFO, "n", "late 4"); /* 3 4 9 -> 4 late4 9 */
	ck_assert_uint_eq(log.n, 3);
	ck_assert_str_eq(xp_event_get(&log, 0)->msg, "event 4");
	ck_assert_str_eq(xp_event_get(&log, 1)->msg, "late 4");
	ck_assert_int_eq((int)xp_event_get(&log, 2)->time, 9);
	xp_event_add(&log, 1, XP_SEV_INFO, "n", "too old");
	ck_assert_str_eq(xp_event_get(&log, 0)->msg, "event 4");
	struct xp_event_log small;
	xp_event_log_init(&small, 4);
	xp_event_add(&small, 10, XP_SEV_INFO, "", "b");
	xp_event_add(&small, 5, XP_SEV_INFO, "", "a");
	xp_event_add(&small, 20, XP_SEV_INFO, "", "c");
	ck_assert_str_eq(xp_event_get(&small, 0)->msg, "a");
	ck_assert_str_eq(xp_event_get(&small, 1)->msg, "b");
	ck_assert_str_eq(xp_event_get(&small, 2)->msg, "c");
	xp_event_log_free(&small);
	ck_assert_str_eq(xp_severity_name(XP_SEV_WARN), "warn");
	xp_event_log_free(&log);
}
END_TEST

XP_DEFINE_SUITE(frame,
	{"core",
	 .tests = {frame_layout, tab_positions, scrolling, glyph_sets, glyph_cells, event_diff, event_problems_at_start, event_ring}})
