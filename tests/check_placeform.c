/* check_placeform.c: the pure parts of the Placement view: the field editor (line_edit.c),
 * the job form (place_form.c) and the result's words and numbers (place_text.c). */
#include <check.h>
#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "line_edit.h"
#include "place_form.h"
#include "place_text.h"
#include "suitelib.h"
#include "xp.h"

static void type(struct xp_ledit *e, const char *s)
{
	for (const char *p = s; *p; p++)
		ck_assert_int_eq(xp_ledit_key(e, (unsigned char)*p), XP_LEDIT_EDITING);
}

START_TEST(ledit_keys)
{
	struct xp_ledit e;
	xp_ledit_start(&e, "H100");
	ck_assert_uint_eq(e.cur, 4);
	type(&e, "*");
	ck_assert_str_eq(e.text, "H100*");
	/* insert in the middle */
	xp_ledit_key(&e, KEY_HOME);
	type(&e, "x");
	ck_assert_str_eq(e.text, "xH100*");
	xp_ledit_key(&e, KEY_RIGHT);
	xp_ledit_key(&e, KEY_BACKSPACE);
	ck_assert_str_eq(e.text, "x100*");
	ck_assert_uint_eq(e.cur, 1);
	xp_ledit_key(&e, KEY_DC);
	ck_assert_str_eq(e.text, "x00*");
	/* Ctrl-K cuts to the end, Ctrl-U to the start */
	xp_ledit_key(&e, KEY_RIGHT);
	xp_ledit_key(&e, 11);
	ck_assert_str_eq(e.text, "x0");
	xp_ledit_key(&e, 21);
	ck_assert_str_eq(e.text, "");
	ck_assert_uint_eq(e.cur, 0);
	/* control bytes are not text; Enter and Esc end */
	ck_assert_int_eq(xp_ledit_key(&e, 7), XP_LEDIT_EDITING);
	ck_assert_int_eq(xp_ledit_key(&e, KEY_F(2)), XP_LEDIT_EDITING);
	ck_assert_str_eq(e.text, "");
	ck_assert_int_eq(xp_ledit_key(&e, '\r'), XP_LEDIT_DONE);
	ck_assert_int_eq(xp_ledit_key(&e, 27), XP_LEDIT_CANCEL);
	ck_assert_int_eq(xp_ledit_key(&e, 3), XP_LEDIT_CANCEL);
	/* NULL starts empty */
	xp_ledit_start(&e, NULL);
	ck_assert_uint_eq(e.len, 0);
}
END_TEST

START_TEST(ledit_utf8)
{
	struct xp_ledit e;
	xp_ledit_start(&e, "a\xc3\xa9"); /* "aé" */
	xp_ledit_key(&e, KEY_BACKSPACE);
	ck_assert_str_eq(e.text, "a");
	xp_ledit_start(&e, "\xc3\xa9z");
	xp_ledit_key(&e, KEY_HOME);
	xp_ledit_key(&e, KEY_RIGHT);
	ck_assert_uint_eq(e.cur, 2); /* over the whole character */
	xp_ledit_key(&e, KEY_LEFT);
	ck_assert_uint_eq(e.cur, 0);
	xp_ledit_key(&e, KEY_DC);
	ck_assert_str_eq(e.text, "z");
	/* a text longer than the editor holds is cut on a character boundary */
	char *big = malloc(XP_LEDIT_MAX + 8);
	memset(big, 'a', XP_LEDIT_MAX - 1);
	memcpy(big + XP_LEDIT_MAX - 1, "\xc3\xa9zz", 5);
	xp_ledit_start(&e, big);
	ck_assert_uint_eq(e.len, XP_LEDIT_MAX - 1);
	/* full: typing does nothing */
	xp_ledit_start(&e, big);
	type(&e, "b");
	type(&e, "b");
	ck_assert_uint_eq(e.len, XP_LEDIT_MAX);
	free(big);
}
END_TEST

START_TEST(ledit_scroll)
{
	struct xp_ledit e;
	xp_ledit_start(&e, "0123456789abcdefghij"); /* 20 columns, cursor at the end */
	/* 10 columns: 9 before the cursor and the cursor cell */
	ck_assert_uint_eq(xp_ledit_scroll(&e, 10), 11);
	ck_assert_uint_eq(xp_ledit_scroll(&e, 40), 0);
	xp_ledit_key(&e, KEY_HOME);
	ck_assert_uint_eq(xp_ledit_scroll(&e, 10), 0);
	/* columns, not bytes: two-byte characters */
	xp_ledit_start(&e, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"); /* 4 columns, 8 bytes */
	ck_assert_uint_eq(xp_ledit_scroll(&e, 3), 4); /* the last two characters show */
}
END_TEST

static struct xp_job *new_job(void)
{
	struct xp_job_flags fl = {0};
	struct xp_err err = {{0}};
	struct xp_job *j = xp_job_from_flags(&fl, &err);
	ck_assert_msg(j != NULL, "%s", err.msg);
	return j;
}

/* What the last set said: a note on what else it changed, or why it refused. */
static char note[256];
static struct xp_err err;

/* Sets field f of group gi of j from text, as the form does; note and err say what came of it. */
static int set(struct xp_job *j, size_t gi, int f, const char *text)
{
	return xp_pf_set(j, gi, f, text, note, sizeof note, &err);
}

START_TEST(form_show_and_set)
{
	struct xp_job *j = new_job();
	struct xp_task_group *g = &j->groups[0];
	char buf[256];
	ck_assert_str_eq(xp_pf_show(g, XP_PF_VENDOR, buf, sizeof buf), "any");
	ck_assert_str_eq(xp_pf_show(g, XP_PF_SLICE, buf, sizeof buf), "none");
	ck_assert_str_eq(xp_pf_show(g, XP_PF_DEVICES, buf, sizeof buf), "1");
	ck_assert_str_eq(xp_pf_text(g, XP_PF_MODEL, buf, sizeof buf), "");
	ck_assert(xp_pf_is_default(g, XP_PF_MODEL));
	ck_assert(!xp_pf_is_default(g, XP_PF_DEVICES));
	/* patterns */
	ck_assert_int_eq(set(j, 0, XP_PF_MODEL, "H100*"), 0);
	ck_assert_str_eq(g->model, "H100*");
	ck_assert_str_eq(note, "");
	ck_assert(!xp_pf_is_default(g, XP_PF_MODEL));
	ck_assert_int_eq(set(j, 0, XP_PF_MODEL, ""), 0);
	ck_assert_ptr_null(g->model);
	/* a refused value names the field as the form does, and changes nothing */
	ck_assert_int_eq(set(j, 0, XP_PF_DEVICES, "two"), -1);
	ck_assert_msg(strncmp(err.msg, "devices: expected an integer", 28) == 0, "%s", err.msg);
	ck_assert_int_eq(g->devices, 1);
	ck_assert_int_eq(set(j, 0, XP_PF_MEMORY, "8k"), -1);
	ck_assert_msg(strncmp(err.msg, "memory MiB: ", 12) == 0, "%s", err.msg);
	ck_assert_int_eq(set(j, 0, XP_PF_MODEL, "a\tb"), -1);
	ck_assert_msg(strncmp(err.msg, "model: ", 7) == 0, "%s", err.msg);
	/* memory: "" is any */
	ck_assert_int_eq(set(j, 0, XP_PF_MEMORY, "40000"), 0);
	ck_assert_int_eq(g->memory_mib, 40000);
	ck_assert_str_eq(xp_pf_show(g, XP_PF_MEMORY, buf, sizeof buf), "40000");
	ck_assert_int_eq(set(j, 0, XP_PF_MEMORY, ""), 0);
	ck_assert_int_eq(g->memory_mib, 0);
	/* labels round-trip */
	ck_assert_int_eq(set(j, 0, XP_PF_LABELS, "pool=a,zone=z1"), 0);
	ck_assert_str_eq(xp_pf_show(g, XP_PF_LABELS, buf, sizeof buf), "pool=a,zone=z1");
	ck_assert_int_eq(set(j, 0, XP_PF_LABELS, "pool"), -1);
	ck_assert_msg(strncmp(err.msg, "labels: ", 8) == 0, "%s", err.msg);
	ck_assert_uint_eq(g->labels.n, 2);
	ck_assert_int_eq(set(j, 0, XP_PF_LABELS, ""), 0);
	ck_assert_uint_eq(g->labels.n, 0);
	/* choices typed as text too */
	ck_assert_int_eq(set(j, 0, XP_PF_NUMA, "strict"), 0);
	ck_assert_int_eq(g->numa, XP_NUMA_STRICT);
	ck_assert_int_eq(set(j, 0, XP_PF_NUMA, "tight"), -1);
	/* out of range */
	ck_assert_int_eq(set(j, 1, XP_PF_MODEL, "x"), -1);
	ck_assert_int_eq(set(j, 0, XP_PF_COUNT, "x"), -1);
	ck_assert_ptr_null(xp_pf_name(XP_PF_COUNT));
	ck_assert_str_eq(xp_pf_name(XP_PF_SAME_GROUP), "same-group");
	xp_job_free(j);
}
END_TEST

START_TEST(form_slice_devices_gang)
{
	struct xp_job *j = new_job();
	struct xp_task_group *g = &j->groups[0];
	char buf[256];
	/* a slice takes the place of whole devices, and says so */
	ck_assert_int_eq(set(j, 0, XP_PF_SLICE, "1g.10gb"), 0);
	ck_assert_str_eq(g->slice, "1g.10gb");
	ck_assert_int_eq(g->devices, 0);
	ck_assert_msg(strstr(note, "devices set to 0"), "%s", note);
	/* whole devices clear the slice */
	ck_assert_int_eq(set(j, 0, XP_PF_DEVICES, "2"), 0);
	ck_assert_ptr_null(g->slice);
	ck_assert_int_eq(g->devices, 2);
	ck_assert_msg(strstr(note, "slice cleared"), "%s", note);
	/* a share is shown and typed as share:N */
	ck_assert_int_eq(set(j, 0, XP_PF_SLICE, "share:50"), 0);
	ck_assert_int_eq(g->share_pct, 50);
	ck_assert_int_eq(g->devices, 0);
	ck_assert_str_eq(xp_pf_show(g, XP_PF_SLICE, buf, sizeof buf), "share:50");
	ck_assert_int_eq(set(j, 0, XP_PF_SLICE, ""), 0);
	ck_assert_int_eq(g->share_pct, 0);
	ck_assert_int_eq(g->devices, 1);
	ck_assert_msg(strstr(note, "devices set to 1"), "%s", note);
	/* gang_min follows replicas while it is all of them */
	ck_assert_int_eq(g->gang_min, 1);
	ck_assert_int_eq(set(j, 0, XP_PF_REPLICAS, "4"), 0);
	ck_assert_int_eq(g->replicas, 4);
	ck_assert_int_eq(g->gang_min, 4);
	g->gang_min = 2;
	ck_assert_int_eq(set(j, 0, XP_PF_REPLICAS, "8"), 0);
	ck_assert_int_eq(g->gang_min, 2);
	ck_assert_int_eq(set(j, 0, XP_PF_REPLICAS, "1"), 0);
	ck_assert_int_eq(g->gang_min, 1);
	xp_job_free(j);
}
END_TEST

START_TEST(form_gang_min)
{
	struct xp_job *j = new_job();
	struct xp_task_group *g = &j->groups[0];
	char buf[256];
	/* right after replicas; a gang of every replica is the default, shown as "all" */
	ck_assert_int_eq(XP_PF_GANG_MIN, XP_PF_REPLICAS + 1);
	ck_assert_str_eq(xp_pf_name(XP_PF_GANG_MIN), "gang min");
	ck_assert(!xp_pf_is_choice(XP_PF_GANG_MIN));
	ck_assert(xp_pf_is_default(g, XP_PF_GANG_MIN));
	ck_assert_str_eq(xp_pf_show(g, XP_PF_GANG_MIN, buf, sizeof buf), "all");
	ck_assert_str_eq(xp_pf_text(g, XP_PF_GANG_MIN, buf, sizeof buf), "1");
	ck_assert_int_eq(set(j, 0, XP_PF_REPLICAS, "8"), 0);
	ck_assert_int_eq(g->gang_min, 8);
	ck_assert_str_eq(xp_pf_show(g, XP_PF_GANG_MIN, buf, sizeof buf), "all");
	ck_assert_int_eq(set(j, 0, XP_PF_GANG_MIN, "3"), 0);
	ck_assert_int_eq(g->gang_min, 3);
	ck_assert_str_eq(note, "");
	ck_assert(!xp_pf_is_default(g, XP_PF_GANG_MIN));
	ck_assert_str_eq(xp_pf_show(g, XP_PF_GANG_MIN, buf, sizeof buf), "3");
	ck_assert_str_eq(xp_pf_text(g, XP_PF_GANG_MIN, buf, sizeof buf), "3");
	/* refused: not a number, 0, more than the replicas; the minimum stays */
	ck_assert_int_eq(set(j, 0, XP_PF_GANG_MIN, "two"), -1);
	ck_assert_msg(strncmp(err.msg, "gang min: expected an integer", 29) == 0, "%s", err.msg);
	ck_assert_int_eq(set(j, 0, XP_PF_GANG_MIN, "0"), -1);
	ck_assert_str_eq(err.msg, "gang min: expected 1 to the 8 replicas, got 0");
	ck_assert_int_eq(set(j, 0, XP_PF_GANG_MIN, "9"), -1);
	ck_assert_str_eq(err.msg, "gang min: expected 1 to the 8 replicas, got 9");
	ck_assert_int_eq(g->gang_min, 3);
	/* "" is every replica again */
	ck_assert_int_eq(set(j, 0, XP_PF_GANG_MIN, ""), 0);
	ck_assert_int_eq(g->gang_min, 8);
	/* the job the form built passes the engine's own check */
	ck_assert_int_eq(set(j, 0, XP_PF_GANG_MIN, "8"), 0);
	ck_assert_int_eq(xp_job_check(j, NULL, 0, &err), 0);
	xp_job_free(j);
}
END_TEST

START_TEST(form_cycle)
{
	struct xp_job *j = new_job();
	struct xp_task_group *g = &j->groups[0];
	ck_assert(xp_pf_is_choice(XP_PF_NUMA));
	ck_assert(!xp_pf_is_choice(XP_PF_MODEL));
	ck_assert_int_eq(xp_pf_cycle(j, 0, XP_PF_NUMA, 1), 0);
	ck_assert_int_eq(g->numa, XP_NUMA_PREFER);
	xp_pf_cycle(j, 0, XP_PF_NUMA, 1);
	xp_pf_cycle(j, 0, XP_PF_NUMA, 1);
	ck_assert_int_eq(g->numa, XP_NUMA_NONE);
	xp_pf_cycle(j, 0, XP_PF_NUMA, -1);
	ck_assert_int_eq(g->numa, XP_NUMA_STRICT);
	xp_pf_cycle(j, 0, XP_PF_NETWORK, -1);
	ck_assert_int_eq(g->network, XP_NET_RACK);
	xp_pf_cycle(j, 0, XP_PF_HOMOGENEOUS, 1);
	ck_assert(g->homogeneous);
	xp_pf_cycle(j, 0, XP_PF_SAME_GROUP, -1);
	ck_assert(g->same_group);
	ck_assert_int_eq(xp_pf_cycle(j, 0, XP_PF_MODEL, 1), -1);
	ck_assert_int_eq(xp_pf_cycle(j, 3, XP_PF_NUMA, 1), -1);
	xp_job_free(j);
}
END_TEST

/* A placed result of two replicas by hand (strings owned by the caller's arrays). */
struct fake {
	struct xp_place_result r;
	struct xp_place_replica reps[2];
	int devs0[2], devs1[1];
};

static void fake_placed(struct fake *f)
{
	memset(f, 0, sizeof *f);
	f->devs0[0] = 2;
	f->devs0[1] = 3;
	f->devs1[0] = 0;
	f->reps[0] = (struct xp_place_replica){.node = "n1", .devices = f->devs0, .n_devices = 2, .score = 90};
	f->reps[1] = (struct xp_place_replica){.node = "n2", .devices = f->devs1, .n_devices = 1, .score = 70,
					       .slice = "1g.10gb"};
	f->reps[0].breakdown[XP_CRIT_UTILIZATION] = 63.75;
	f->reps[0].breakdown[XP_CRIT_TOPOLOGY] = 26.25;
	f->r = (struct xp_place_result){.placed = true, .strategy = XP_STRAT_PACK, .replicas = f->reps,
					.n_replicas = 2, .n_nodes = 40, .summary = "placed"};
}

START_TEST(text_outcomes)
{
	struct fake f;
	fake_placed(&f);
	char buf[256];
	ck_assert(xp_pv_mean_score(&f.r) == 80);
	ck_assert_uint_eq(xp_pv_node_count(&f.r), 2);
	ck_assert_str_eq(xp_pv_outcome(&f.r, buf, sizeof buf), "80.0");
	ck_assert_str_eq(xp_pv_where(&f.r, buf, sizeof buf), "2 nodes: n1, n2");
	f.reps[1].node = "n1";
	ck_assert_uint_eq(xp_pv_node_count(&f.r), 1);
	ck_assert_str_eq(xp_pv_where(&f.r, buf, sizeof buf), "1 node: n1");
	f.r.n_replicas = 1;
	ck_assert_str_eq(xp_pv_where(&f.r, buf, sizeof buf), "n1 [2,3]");
	ck_assert_str_eq(xp_pv_devices(&f.reps[1], buf, sizeof buf), "0 1g.10gb");
	ck_assert_str_eq(xp_pv_breakdown(XP_STRAT_PACK, &f.reps[0], buf, sizeof buf),
			 "utilization 63.8 + topology 26.2");
	ck_assert(xp_pv_chosen(&f.r, "n1", 3));
	ck_assert(!xp_pv_chosen(&f.r, "n1", 1));
	ck_assert(!xp_pv_chosen(&f.r, "n2", 2));
	/* not placed, and no result at all */
	struct xp_place_result no = {.placed = false, .n_nodes = 40, .summary = "0/40 nodes fit: 40 x"};
	ck_assert(xp_pv_mean_score(&no) < 0);
	ck_assert(xp_pv_mean_score(NULL) < 0);
	ck_assert_str_eq(xp_pv_outcome(&no, buf, sizeof buf), "0/40 fit");
	ck_assert_str_eq(xp_pv_outcome(NULL, buf, sizeof buf), "-");
	ck_assert_str_eq(xp_pv_compare(XP_STRAT_TOPOLOGY, NULL, XP_STRAT_GREEN, &no, buf, sizeof buf),
			 "topology - -> green 0/40 fit");
	ck_assert_str_eq(xp_pv_where(&no, buf, sizeof buf), "0/40 nodes fit: 40 x");
	f.r.n_replicas = 2;
	ck_assert_str_eq(xp_pv_compare(XP_STRAT_PACK, &f.r, XP_STRAT_SPREAD, &no, buf, sizeof buf),
			 "pack 80.0 -> spread 0/40 fit");
	/* short buffers are cut, never overrun */
	char tiny[6];
	ck_assert_uint_eq(strlen(xp_pv_compare(XP_STRAT_PACK, &f.r, XP_STRAT_GREEN, &f.r, tiny, sizeof tiny)), 5);
	ck_assert_uint_eq(strlen(xp_pv_where(&f.r, tiny, sizeof tiny)), 5);
	ck_assert_uint_eq(strlen(xp_pv_breakdown(XP_STRAT_GREEN, &f.reps[0], tiny, sizeof tiny)), 5);
}
END_TEST

START_TEST(text_relax_mounts)
{
	char buf[256];
	/* the relaxation as xpool place prints it */
	struct xp_place_relax x = {.field = "devices", .from = "8", .to = "4",
				   .summary = "placed 1 replica on 1 node (pack)"};
	struct xp_place_result no = {.placed = false, .n_nodes = 40, .summary = "0/40 nodes fit: 40 x"};
	ck_assert_str_eq(xp_pv_relaxation(&no, buf, sizeof buf), "");
	ck_assert_str_eq(xp_pv_relaxation(NULL, buf, sizeof buf), "");
	no.relaxation = &x;
	ck_assert_str_eq(xp_pv_relaxation(&no, buf, sizeof buf),
			 "would fit with devices 8 -> 4: placed 1 replica on 1 node (pack)");
	/* mounts: all of them when they fit, cut with an ellipsis when not */
	char *mounts[] = {"/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"};
	struct xp_place_replica p = {.node = "n1", .mounts = mounts, .n_mounts = 3};
	const char *all = "mounts: /dev/nvidia0 /dev/nvidiactl /dev/nvidia-uvm"; /* 51 columns */
	ck_assert_str_eq(xp_pv_mounts(&p, 80, true, buf, sizeof buf), all);
	ck_assert_str_eq(xp_pv_mounts(&p, 51, false, buf, sizeof buf), all);
	ck_assert_str_eq(xp_pv_mounts(&p, 50, true, buf, sizeof buf),
			 "mounts: /dev/nvidia0 /dev/nvidiactl /dev/nvidia-u\u2026");
	ck_assert_str_eq(xp_pv_mounts(&p, 24, false, buf, sizeof buf), "mounts: /dev/nvidia0 ...");
	ck_assert_str_eq(xp_pv_mounts(&p, 2, false, buf, sizeof buf), "mo");
	ck_assert_str_eq(xp_pv_mounts(&p, 0, true, buf, sizeof buf), "");
	p.n_mounts = 0;
	ck_assert_str_eq(xp_pv_mounts(&p, 80, true, buf, sizeof buf), "");
	ck_assert_str_eq(xp_pv_mounts(NULL, 80, true, buf, sizeof buf), "");
	/* a buffer too short for the list ends in the dots too, never overrun */
	p.n_mounts = 3;
	char small[16];
	ck_assert_str_eq(xp_pv_mounts(&p, 80, false, small, sizeof small), "mounts: /de...");
	ck_assert_str_eq(xp_pv_mounts(&p, 80, true, small, sizeof small), "mounts: /dev\u2026");
	/* clip counts characters, not bytes, and keeps them whole */
	char t[32] = "ab\u00e9\u00e9\u00e9cd"; /* "abééécd": 7 columns, 10 bytes */
	ck_assert_str_eq(xp_pv_clip(t, sizeof t, 7, true), "ab\u00e9\u00e9\u00e9cd");
	ck_assert_str_eq(xp_pv_clip(t, sizeof t, 4, true), "ab\u00e9\u2026");
	char u[8] = "abcdefg"; /* the dots (3 bytes) after 5 characters would not fit in 8 bytes */
	ck_assert_str_eq(xp_pv_clip(u, sizeof u, 6, true), "abcd\u2026");
}
END_TEST

START_TEST(text_widths)
{
	ck_assert_int_eq(xp_pv_form_width(80), 32);
	ck_assert_int_eq(xp_pv_form_width(120), 40);
	ck_assert_int_eq(xp_pv_form_width(300), 40);
	/* never more than half: the result keeps room */
	ck_assert_int_eq(xp_pv_form_width(50), 25);
	char buf[32];
	ck_assert_str_eq(xp_pv_ms(0.0412, buf, sizeof buf), "0.04 ms");
	ck_assert_str_eq(xp_pv_ms(2.84, buf, sizeof buf), "2.8 ms");
	ck_assert_str_eq(xp_pv_ms(1352.9, buf, sizeof buf), "1.35 s");
	ck_assert_str_eq(xp_pv_ms(-1, buf, sizeof buf), "0.00 ms");
	ck_assert_str_eq(xp_pv_chosen_glyph(false), "*");
	ck_assert_str_eq(xp_pv_chosen_glyph(true), "\u25c6");
}
END_TEST

XP_DEFINE_SUITE(placeform,
	{"core",
	 .tests = {ledit_keys, ledit_utf8, ledit_scroll, form_show_and_set, form_slice_devices_gang,
		   form_gang_min, form_cycle, text_outcomes, text_relax_mounts, text_widths}})
