/* check_procs.c: processes per device: the vendor parsers over the real recorded outputs that
 * list processes (nvidia-smi -q -x, npu-smi info), the live owner lookup in /proc, the model's
 * cleaning, the inventory document (round trip and hostile input), and replay end to end.
 *
 * Expected pids, names and sizes were read from the fixture files by eye. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ascend/ascend.h"
#include "fakehost.h"
#include "model.h"
#include "model_json.h"
#include "nvidia/nvidia.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"
#include "xp_adapter.h"

#define NV "nvidia-smi/"
#define F910A "ascend/npu-smi-info_atlas800-9010_8x910A_24.1.RC2.txt"
#define F910B "ascend/npu-smi-info_8x910B3_25.2.0_procs.txt"

static struct xp_raw_node *parse_nv(const char *text, size_t len)
{
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_msg(xp_nvsmi_parse_xml(text, len, n, err, sizeof err) == 0, "%s", err);
	return n;
}

static struct xp_raw_node *nv_fixture(const char *rel)
{
	size_t len;
	char *text = xp_fixture_text(rel, &len);
	struct xp_raw_node *n = parse_nv(text, len);
	free(text);
	return n;
}

static struct xp_raw_node *parse_npu(const char *text, size_t len)
{
	struct xp_raw_node *n = xp_fake_node();
	char err[256] = "";
	ck_assert_msg(xp_npusmi_parse_info(text, len, n, err, sizeof err) == 0, "%s", err);
	return n;
}

static struct xp_raw_node *npu_fixture(const char *rel)
{
	size_t len;
	char *text = xp_fixture_text(rel, &len);
	struct xp_raw_node *n = parse_npu(text, len);
	free(text);
	return n;
}

static void want_proc(const struct xp_raw_proc *p, int64_t pid, const char *type, const char *name, int64_t mib)
{
	ck_assert_int_eq(p->pid, pid);
	ck_assert_str_eq(p->type, type);
	ck_assert_str_eq(p->name, name);
	ck_assert_int_eq(p->memory_mib, mib);
	ck_assert(isnan(p->util_pct)); /* neither tool reports it */
	ck_assert_str_eq(p->user, "");  /* parsers never look at /proc */
}

/* ---- nvidia-smi -q -x ---- */

START_TEST(test_nvsmi_t4)
{
	struct xp_raw_node *n = nv_fixture(NV "tesla-t4_515.105.01.q.xml");
	ck_assert_int_eq(n->n_devices, 1);
	const struct xp_raw_device *d = &n->devices[0];
	ck_assert_int_eq(d->n_procs, 2);
	want_proc(&d->procs[0], 675, "G", "/usr/lib/xorg/Xorg", 22);
	want_proc(&d->procs[1], 5762, "C", "python", 1005);
	ck_assert_int_eq(n->n_warnings, 0);
	free(n);
}
END_TEST

START_TEST(test_nvsmi_rtx4000)
{
	struct xp_raw_node *n = nv_fixture(NV "rtx-4000-sff-ada_595.84.q.xml");
	ck_assert_int_eq(n->n_devices, 1);
	const struct xp_raw_device *d = &n->devices[0];
	ck_assert_int_eq(d->n_procs, 4);
	want_proc(&d->procs[0], 1842, "G", "cosmic-comp", 410);
	want_proc(&d->procs[1], 3190, "G", "/usr/bin/code", 451);
	want_proc(&d->procs[2], 4937, "C", "python", 160);
	want_proc(&d->procs[3], 34626, "C+G", "/usr/lib/chromium/chromium", 183);
	free(n);
}
END_TEST

/* <processes /> lists none; no <processes> at all is not known. */
START_TEST(test_nvsmi_none_and_unknown)
{
	struct xp_raw_node *n = nv_fixture(NV "a100-sxm4-80gb-x4_535.54.03.q.xml");
	ck_assert_int_eq(n->n_devices, 1); /* the capture lists one of its four GPUs */
	ck_assert_int_eq(n->devices[0].n_procs, 0);
	free(n);
	n = nv_fixture(NV "quadro-p400_418.43.q.xml"); /* <processes>\n</processes> */
	ck_assert_int_eq(n->devices[0].n_procs, 0);
	free(n);
	n = nv_fixture(NV "gtx-1070-ti.q.xml"); /* no <processes> element */
	ck_assert_int_eq(n->devices[0].n_procs, -1);
	free(n);
}
END_TEST

/* The T4 report with its second process repeated: 71 in all keeps 64 and says so once; a pid
 * or a size that is no number is unknown, a type outside C, G, C+G is not known. */
START_TEST(test_nvsmi_many_and_bad)
{
	char *t = xp_fixture_text(NV "tesla-t4_515.105.01.q.xml", NULL);
	const char *one = strstr(t, "<process_info>");
	const char *second = strstr(one + 1, "<process_info>");
	const char *end = strstr(second, "</process_info>") + strlen("</process_info>");
	size_t pl = (size_t)(end - second), head = (size_t)(second - t);
	char *big = xp_malloc(strlen(t) + 70 * pl + 1);
	memcpy(big, t, head);
	size_t o = head;
	for (int i = 0; i < 69; i++, o += pl)
		memcpy(big + o, second, pl);
	strcpy(big + o, second);
	struct xp_raw_node *n = parse_nv(big, strlen(big));
	ck_assert_int_eq(n->devices[0].n_procs, XP_RAW_MAX_PROCS);
	ck_assert_int_eq(n->devices[0].procs_left_out, 71 - XP_RAW_MAX_PROCS);
	ck_assert(xp_fake_warned(n, "GPU 0: more than 64 processes; the rest are left out"));
	ck_assert_int_eq(n->n_warnings, 1);
	free(n);
	free(big);

	char *bad = xp_strdup(t);
	char *p = strstr(bad, "<pid>675</pid>");
	memcpy(p, "<pid>6x5</pid>", 14);
	p = strstr(bad, "<type>G</type>");
	memcpy(p, "<type>Q</type>", 14);
	p = strstr(bad, "<used_memory>22 MiB</used_memory>");
	memcpy(p, "<used_memory>N/A MiB</used_memory>", 14 + 3);
	n = parse_nv(bad, strlen(bad));
	ck_assert_int_eq(n->devices[0].n_procs, 2);
	ck_assert_int_eq(n->devices[0].procs[0].pid, -1);
	ck_assert_str_eq(n->devices[0].procs[0].type, "");
	ck_assert_str_eq(n->devices[0].procs[0].name, "/usr/lib/xorg/Xorg");
	ck_assert_int_eq(n->devices[0].procs[0].memory_mib, -1);
	want_proc(&n->devices[0].procs[1], 5762, "C", "python", 1005);
	free(n);
	free(bad);
	free(t);
}
END_TEST

/* ---- npu-smi info ---- */

START_TEST(test_npusmi_910a)
{
	/* The process table of Huawei's sample: four processes per NPU, all of 686 MB. */
	static const int64_t pids[8][4] = {
		{37656, 37664, 37640, 37648}, {37665, 37641, 37649, 37657}, {37658, 37650, 37666, 37642},
		{37643, 37651, 37659, 37667}, {37668, 37644, 37652, 37660}, {37653, 37661, 37669, 37645},
		{37646, 37654, 37662, 37670}, {37671, 37647, 37655, 37663},
	};
	struct xp_raw_node *n = npu_fixture(F910A);
	ck_assert_int_eq(n->n_warnings, 0);
	ck_assert_int_eq(n->n_devices, 8);
	for (int i = 0; i < 8; i++) {
		const struct xp_raw_device *d = &n->devices[i];
		ck_assert_int_eq(d->index, i);
		ck_assert_int_eq(d->n_procs, 4);
		for (int k = 0; k < 4; k++)
			want_proc(&d->procs[k], pids[i][k], "", "hlt_host_devmm_", 686);
	}
	free(n);
}
END_TEST

/* npu-smi 25.2.0 on 8 x 910B3: "No running processes found in NPU N" for seven, one process
 * with an empty name on NPU 2. */
START_TEST(test_npusmi_910b_idle_rows)
{
	struct xp_raw_node *n = npu_fixture(F910B);
	for (int i = 0; i < n->n_warnings; i++)
		fprintf(stderr, "warning: %s\n", n->warnings[i]);
	ck_assert_int_eq(n->n_warnings, 0);
	ck_assert_int_eq(n->n_devices, 8);
	for (int i = 0; i < 8; i++) {
		const struct xp_raw_device *d = &n->devices[i];
		ck_assert_int_eq(d->index, i);
		ck_assert_int_eq(d->n_procs, i == 2 ? 1 : 0);
	}
	want_proc(&n->devices[2].procs[0], 1333928, "", "", 37709);
	ck_assert_int_eq(n->devices[2].memory_used_mib, 41052);
	free(n);
}
END_TEST

/* The 310 samples have no process table: every list stays unknown. */
START_TEST(test_npusmi_no_table)
{
	const char *files[] = {"ascend/npu-smi-info_atlas800-3000_310_21.0.4.txt",
			       "ascend/npu-smi-info_atlas800-3000_310_old.txt"};
	for (size_t f = 0; f < 2; f++) {
		struct xp_raw_node *n = npu_fixture(files[f]);
		ck_assert_int_gt(n->n_devices, 0);
		for (int i = 0; i < n->n_devices; i++)
			ck_assert_int_eq(n->devices[i].n_procs, -1);
		free(n);
	}
}
END_TEST

/* The 910A sample with its first process row repeated 70 times, then a row whose pid is no
 * number, then a process on an NPU the device table does not list. */
START_TEST(test_npusmi_hostile_rows)
{
	char *t = xp_fixture_text(F910A, NULL);
	const char *row = strstr(t, "| 0       0            | 37656");
	ck_assert_ptr_nonnull(row);
	size_t rl = (size_t)(strchr(row, '\n') + 1 - row), head = (size_t)(row - t);
	char *big = xp_malloc(strlen(t) + 80 * rl + 400);
	memcpy(big, t, head);
	size_t o = head;
	for (int i = 0; i < 70; i++, o += rl)
		memcpy(big + o, row, rl);
	o += (size_t)sprintf(big + o, "| 0       0            | 37x56         | hlt_host_devmm_          | 686                     |\n");
	o += (size_t)sprintf(big + o, "| 9       0            | 40000         | hlt_host_devmm_          | 686                     |\n");
	strcpy(big + o, row);
	struct xp_raw_node *n = parse_npu(big, strlen(big));
	ck_assert_int_eq(n->devices[0].n_procs, XP_RAW_MAX_PROCS);
	ck_assert(xp_fake_warned(n, "NPU 0: more than 64 processes; the rest are left out"));
	ck_assert(xp_fake_warned(n, "process row \"| 0       0            | 37x56"));
	ck_assert(xp_fake_warned(n, "a process on NPU 9 chip 0, which the device table does not list"));
	ck_assert_int_eq(n->devices[1].n_procs, 4); /* the rest of the table is still read */
	free(n);
	free(big);
	free(t);
}
END_TEST

/* Every prefix of both samples: the processes a cut table gives are the whole table's, in its
 * order; "none" only where the whole table says none (a row cut inside "NPU 1" of a 12 is no
 * idle NPU 1). */
START_TEST(test_npusmi_truncated)
{
	const char *files[] = {F910A, F910B};
	for (size_t f = 0; f < 2; f++) {
		struct xp_raw_node *full = npu_fixture(files[f]), *n = xp_fake_node();
		size_t len;
		char *text = xp_fixture_text(files[f], &len), err[256];
		for (size_t cut = 0; cut <= len; cut++) {
			char *copy = xp_malloc(cut ? cut : 1);
			memcpy(copy, text, cut);
			xp_raw_node_init(n);
			if (xp_npusmi_parse_info(copy, cut, n, err, sizeof err) == 0)
				for (int i = 0; i < n->n_devices; i++) {
					const struct xp_raw_device *d = &n->devices[i], *fd = &full->devices[i];
					ck_assert_int_le(d->n_procs, fd->n_procs);
					ck_assert_msg(d->n_procs != 0 || fd->n_procs == 0, "%s cut at %zu: NPU %d idle", files[f],
						      cut, d->index);
					for (int k = 0; k < d->n_procs; k++)
						ck_assert_msg(memcmp(&d->procs[k], &fd->procs[k], sizeof d->procs[k]) == 0,
							      "%s cut at %zu: NPU %d process %d", files[f], cut, d->index, k);
				}
			free(copy);
		}
		free(text);
		free(n);
		free(full);
	}
}
END_TEST

/* ---- live: /proc ---- */

START_TEST(test_proc_owner_live)
{
	struct xp_raw_node *n = xp_fake_node();
	n->n_devices = 1;
	struct xp_raw_device *d = &n->devices[0];
	xp_raw_device_init(d);
	d->index = 0;
	char comm[64] = "";
	FILE *f = fopen("/proc/self/comm", "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(comm, sizeof comm, f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	struct xp_raw_proc *p = xp_raw_add_proc(n, d, "GPU");
	p->pid = getpid();
	snprintf(p->name, sizeof p->name, "/some/dir/%s", comm); /* as nvidia-smi names it */
	struct xp_raw_proc *q = xp_raw_add_proc(n, d, "GPU");
	q->pid = getpid();
	snprintf(q->name, sizeof q->name, "not-this-process"); /* another namespace's pid */
	struct xp_raw_proc *r = xp_raw_add_proc(n, d, "GPU");
	r->pid = 0x7ffffff0; /* no such process */
	snprintf(r->name, sizeof r->name, "python");
	struct xp_raw_proc *u = xp_raw_add_proc(n, d, "GPU");
	u->pid = getpid(); /* no name (NVML): this process holds no /dev/nvidia file open */
	FILE *held = fopen("/dev/null", "r"); /* but it holds /dev/null */
	ck_assert_ptr_nonnull(held);
	struct xp_raw_node *n2 = xp_fake_node();
	memcpy(n2, n, sizeof *n);
	xp_raw_procs_from_proc(n, "/dev/nvidia");
	xp_raw_procs_from_proc(n2, "/dev/null");
	fclose(held);
	struct passwd *pw = getpwuid(getuid());
	ck_assert_ptr_nonnull(pw);
	ck_assert_str_eq(d->procs[0].user, pw->pw_name);
	/* The command line: this runner's own argv[0] first. */
	char cmd[256] = "";
	f = fopen("/proc/self/cmdline", "r");
	ck_assert_ptr_nonnull(f);
	size_t got = fread(cmd, 1, sizeof cmd - 1, f);
	fclose(f);
	cmd[got] = '\0';
	ck_assert_msg(strncmp(d->procs[0].name, cmd, strlen(cmd)) == 0, "%s", d->procs[0].name);
	ck_assert_str_eq(d->procs[1].user, "");
	ck_assert_str_eq(d->procs[1].name, "not-this-process");
	ck_assert_str_eq(d->procs[2].user, "");
	ck_assert_str_eq(d->procs[2].name, "python");
	ck_assert_str_eq(d->procs[3].user, "");
	ck_assert_str_eq(d->procs[3].name, "");
	ck_assert_str_eq(n2->devices[0].procs[3].user, pw->pw_name); /* it does hold /dev/null */
	ck_assert_msg(strncmp(n2->devices[0].procs[3].name, cmd, strlen(cmd)) == 0, "%s", n2->devices[0].procs[3].name);
	free(n2);
	free(n);
}
END_TEST

/* ---- the model ---- */

static struct xp_node *node_with_procs(void)
{
	struct xp_node *n = xp_node_new("gpu-7");
	struct xp_device *d = xp_node_add_device(n);
	struct xp_proc *p = xp_device_add_proc(d);
	p->pid = 5762;
	p->user = xp_strdup("alice");
	p->command = xp_strdup("python train.py --lr 0.1");
	p->memory_mib = 1005;
	p->util_pct = 87.5;
	snprintf(p->type, sizeof p->type, "C");
	p = xp_device_add_proc(d); /* nothing known but that it is there */
	d = xp_node_add_device(n);
	d->procs_known = true; /* listed: none */
	xp_node_add_device(n); /* not known */
	xp_node_links_reset(n);
	return n;
}

START_TEST(test_model_clone_clean)
{
	struct xp_node *n = node_with_procs();
	struct xp_proc *p = &n->devices[0].procs[0];
	free(p->command);
	p->command = xp_strdup("evil\x1b]0;owned\x07 \xc2\x9b" "2J");
	snprintf(p->type, sizeof p->type, "X");
	struct xp_node *c = xp_node_clone(n);
	xp_node_free(n);
	ck_assert_uint_eq(c->devices[0].n_procs, 2);
	ck_assert(c->devices[1].procs_known && c->devices[1].n_procs == 0);
	ck_assert(!c->devices[2].procs_known);
	xp_node_clean(c);
	/* One '?' for the C1 CSI (two bytes), as error messages and the output mask it. */
	ck_assert_str_eq(c->devices[0].procs[0].command, "evil?]0;owned? ?2J");
	ck_assert_str_eq(c->devices[0].procs[0].type, "");
	ck_assert_str_eq(c->devices[0].procs[0].user, "alice");
	ck_assert_int_eq(c->devices[0].procs[1].pid, -1);
	ck_assert(isnan(c->devices[0].procs[1].util_pct));
	xp_node_free(c);
}
END_TEST

/* ---- the inventory document ---- */

static char *write_doc(const struct xp_cluster *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xp_err err = {{0}};
	ck_assert_int_eq(xp_cluster_write(c, f, 0, &err), 0);
	fclose(f);
	return buf;
}

START_TEST(test_json_round_trip)
{
	struct xp_cluster *c = xp_cluster_new();
	xp_cluster_add(c, node_with_procs());
	char *streamed = write_doc(c);
	json_t *tree = xp_cluster_to_json(c);
	char *dumped = json_dumps(tree, JSON_COMPACT);
	json_decref(tree);
	/* The two encoders agree byte for byte (the streamed one ends with a newline). */
	ck_assert_uint_eq(strlen(streamed), strlen(dumped) + 1);
	ck_assert(strncmp(streamed, dumped, strlen(dumped)) == 0);
	ck_assert_ptr_nonnull(strstr(dumped, "\"processes\":[{\"pid\":5762,\"user\":\"alice\",\"command\":\"python "
					     "train.py --lr 0.1\",\"memory_mib\":1005,\"util_pct\":87.5,\"type\":\"C\"},"
					     "{\"pid\":null,\"user\":null,\"command\":null,\"memory_mib\":null,"
					     "\"util_pct\":null,\"type\":null}]"));
	ck_assert_ptr_nonnull(strstr(dumped, "\"allocations\":[],\"processes\":[]}"));
	struct xp_err err = {{0}};
	struct xp_cluster *back = xp_cluster_parse(streamed, strlen(streamed), "t.json", &err);
	ck_assert_msg(back != NULL, "%s", err.msg);
	const struct xp_node *n = back->nodes[0];
	ck_assert_uint_eq(n->devices[0].n_procs, 2);
	const struct xp_proc *p = &n->devices[0].procs[0];
	ck_assert_int_eq(p->pid, 5762);
	ck_assert_str_eq(p->user, "alice");
	ck_assert_str_eq(p->command, "python train.py --lr 0.1");
	ck_assert_int_eq(p->memory_mib, 1005);
	ck_assert_double_eq(p->util_pct, 87.5);
	ck_assert_str_eq(p->type, "C");
	ck_assert_int_eq(n->devices[0].procs[1].pid, -1);
	ck_assert_ptr_null(n->devices[0].procs[1].command);
	ck_assert(n->devices[1].procs_known && n->devices[1].n_procs == 0);
	ck_assert(!n->devices[2].procs_known);
	char *again = write_doc(back);
	ck_assert_str_eq(again, streamed);
	free(again);
	xp_cluster_free(back);
	/* "processes": null reads as not known. */
	const char *nul = "{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\",\"devices\":[{\"index\":0,"
			  "\"processes\":null}]}]}";
	back = xp_cluster_parse(nul, strlen(nul), "t.json", &err);
	ck_assert_msg(back != NULL, "%s", err.msg);
	ck_assert(!back->nodes[0]->devices[0].procs_known);
	xp_cluster_free(back);
	free(streamed);
	free(dumped);
	xp_cluster_free(c);
}
END_TEST

START_TEST(test_json_hostile)
{
	static const struct {
		const char *procs, *msg;
	} bad[] = {
		{"{}", "$.nodes[0].devices[0].processes: expected an array or null, got an object"},
		{"[1]", "$.nodes[0].devices[0].processes[0]: expected an object, got an integer"},
		{"[{\"pid\":\"5762\"}]", "$.nodes[0].devices[0].processes[0].pid: expected an integer or null, got a string"},
		{"[{\"pid\":-4}]", "$.nodes[0].devices[0].processes[0].pid: expected an integer from 0 to 4194304 or null, got -4"},
		{"[{\"pid\":99999999999999999}]", "processes[0].pid: expected an integer from 0 to 4194304 or null, got 99999999999999999"},
		{"[{\"pid\":1e400}]", "real number overflow"},
		{"[{\"memory_mib\":1.5}]", "processes[0].memory_mib: expected an integer or null, got a real number"},
		{"[{\"util_pct\":101}]", "processes[0].util_pct"},
		{"[{\"type\":\"X\"}]", "processes[0].type: expected \"C\", \"G\", \"C+G\" or null, got another string"},
		{"[{\"type\":7}]", "processes[0].type: expected \"C\", \"G\", \"C+G\" or null, got an integer"},
		{"[{\"command\":\"a\\u001b]0;x\\u0007\"}]", "processes[0].command: a string must not contain control characters"},
		{"[{\"user\":[]}]", "processes[0].user: expected a string or null, got an array"},
		{"[{\"pid\":1,\"pid\":2}]", "duplicate object key"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *t = xp_asprintf("{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\",\"devices\":"
				      "[{\"index\":0,\"processes\":%s}]}]}", bad[i].procs);
		struct xp_err err = {{0}};
		struct xp_cluster *c = xp_cluster_parse(t, strlen(t), "t.json", &err);
		ck_assert_msg(c == NULL, "accepted %s", bad[i].procs);
		ck_assert_msg(strstr(err.msg, bad[i].msg), "%s: %s", bad[i].procs, err.msg);
		free(t);
	}
	/* XP_MAX_PROCS processes are read; one more is refused. */
	for (int extra = 0; extra < 2; extra++) {
		size_t n = XP_MAX_PROCS + (size_t)extra;
		char *body = xp_malloc(n * 16 + 64), *o = body;
		*o++ = '[';
		for (size_t i = 0; i < n; i++)
			o += sprintf(o, "%s{\"pid\":%zu}", i ? "," : "", i + 1);
		strcpy(o, "]");
		char *t = xp_asprintf("{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\",\"devices\":"
				      "[{\"index\":0,\"processes\":%s}]}]}", body);
		struct xp_err err = {{0}};
		struct xp_cluster *c = xp_cluster_parse(t, strlen(t), "t.json", &err);
		if (!extra) {
			ck_assert_msg(c != NULL, "%s", err.msg);
			ck_assert_uint_eq(c->nodes[0]->devices[0].n_procs, XP_MAX_PROCS);
			xp_cluster_free(c);
		} else {
			ck_assert_ptr_null(c);
			ck_assert_msg(strstr(err.msg, "$.nodes[0].devices[0].processes: more than the 1024 entries allowed"),
				      "%s", err.msg);
		}
		free(body);
		free(t);
	}
	/* A command of more than 4096 bytes. */
	char *longcmd = xp_malloc(5000);
	memset(longcmd, 'x', 4097);
	longcmd[4097] = '\0';
	char *t = xp_asprintf("{\"schema\":\"xpool.inventory/v1\",\"nodes\":[{\"name\":\"a\",\"devices\":"
			      "[{\"index\":0,\"processes\":[{\"command\":\"%s\"}]}]}]}", longcmd);
	struct xp_err err = {{0}};
	ck_assert_ptr_null(xp_cluster_parse(t, strlen(t), "t.json", &err));
	ck_assert_msg(strstr(err.msg, "processes[0].command: a string of 4097 bytes, more than the 4096 allowed"), "%s",
		      err.msg);
	free(t);
	free(longcmd);
}
END_TEST

/* ---- replay and inventory end to end ---- */

static char dir[] = "/tmp/xp-procs-XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	xp_rm_rf(dir);
	strcpy(dir, "/tmp/xp-procs-XXXXXX");
}

START_TEST(test_replay_inventory)
{
	char *rep = xp_assemble(dir, "t4-node", NV "tesla-t4_515.105.01.q.xml", "nvidia-smi-q-x.xml", NULL);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", rep, "inventory", "--json", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_error_t je;
	json_t *doc = json_loads(r.out, 0, &je);
	ck_assert_ptr_nonnull(doc);
	json_t *procs = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(doc, "nodes"), 0),
								       "devices"), 0), "processes");
	ck_assert_uint_eq(json_array_size(procs), 2);
	json_t *p = json_array_get(procs, 1);
	ck_assert_int_eq(json_integer_value(json_object_get(p, "pid")), 5762);
	ck_assert_str_eq(json_string_value(json_object_get(p, "command")), "python");
	ck_assert(json_is_null(json_object_get(p, "user"))); /* replayed: another machine's pid */
	ck_assert_int_eq(json_integer_value(json_object_get(p, "memory_mib")), 1005);
	json_decref(doc);
	xp_run_free(&r);

	/* The text listing of one node shows them, "-" for what is not known. */
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--replay", rep, "inventory", "--processes", NULL), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "NODE") && strstr(r.out, "PID") && strstr(r.out, "USER"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "t4-node  0    675   -     G     22 MiB    -     /usr/lib/xorg/Xorg\n"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "t4-node  0    5762  -     C     1005 MiB  -     python\n"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "2 processes; 0 devices with none; 0 devices not reporting processes"), "%s", r.out);
	xp_run_free(&r);
	free(rep);
}
END_TEST

/* An agent replaying the 910A sample serves the processes with its node. */
START_TEST(test_agent_serves)
{
	char *rep = xp_assemble(dir, "atlas", F910A, "npu-smi-info.txt", NULL);
	char url[256];
	pid_t pid = xp_agent_start(url, sizeof url, "--replay", rep, NULL);
	ck_assert_msg(pid > 0, "agent did not start: %s", url);
	char *list = xp_asprintf("%s\n", url);
	char *file = xp_write_file(dir, "agents.txt", list, 0644);
	struct xp_run r;
	ck_assert_int_eq(xp_run_xpool(&r, NULL, "--agents", file, "inventory", "--json", NULL), 0);
	xp_agent_stop(pid);
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_error_t je;
	json_t *doc = json_loads(r.out, 0, &je);
	ck_assert_ptr_nonnull(doc);
	json_t *devs = json_object_get(json_array_get(json_object_get(doc, "nodes"), 0), "devices");
	size_t with = 0, i;
	json_t *d;
	json_array_foreach(devs, i, d)
	{
		json_t *procs = json_object_get(d, "processes");
		if (!json_is_array(procs))
			continue;
		with++;
		ck_assert_uint_eq(json_array_size(procs), 4);
		ck_assert_str_eq(json_string_value(json_object_get(json_array_get(procs, 0), "command")),
				 "hlt_host_devmm_");
	}
	ck_assert_uint_eq(with, 8);
	json_t *p0 = json_object_get(json_array_get(devs, 0), "processes");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(p0, 0), "pid")), 37656);
	json_decref(doc);
	xp_run_free(&r);
	free(file);
	free(list);
	free(rep);
}
END_TEST

XP_DEFINE_SUITE(procs,
	{"parsers", .tests = {test_nvsmi_t4, test_nvsmi_rtx4000, test_nvsmi_none_and_unknown, test_nvsmi_many_and_bad,
			      test_npusmi_910a, test_npusmi_910b_idle_rows, test_npusmi_no_table,
			      test_npusmi_hostile_rows, test_npusmi_truncated, test_proc_owner_live}},
	{"model", .tests = {test_model_clone_clean, test_json_round_trip, test_json_hostile}},
	{"end to end", .setup = setup, .teardown = teardown, .timeout_s = 120,
	 .tests = {test_replay_inventory, test_agent_serves}})
