/* check_slurm_scale.c: the Slurm node reader (backends/slurm.c) on a cluster of thousands of
 * nodes made from the recorded `scontrol -d show node -o` record of gpu01 (renamed): every
 * node read, in order, and a name listed twice refused wherever the first one is, in this
 * text or already in the cluster. Names are joined by hash (xp_nameset): a scan per record
 * made 10,000 nodes 50 million comparisons (bench_engines: 1 s to parse). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checklib.h"
#include "model.h"
#include "slurm.h"
#include "suitelib.h"
#include "testlib.h"
#include "xp.h"

#define WHAT "scontrol -d show node -o"
#define COUNT 5000

/* The first record of the recorded output (gpu01's), without its newline. */
static char *first_record(void)
{
	size_t len = 0;
	struct xp_err err = {{0}};
	char *text = xp_read_file(xp_fixture("slurm/scontrol-show-node-d.txt"), 1 << 20, &len, &err);
	ck_assert_msg(text, "%s", err.msg);
	char *nl = strchr(text, '\n');
	ck_assert_ptr_nonnull(nl);
	*nl = '\0';
	ck_assert_ptr_nonnull(strstr(text, "NodeName=gpu01 "));
	return text;
}

/* rec with every "gpu01" (NodeName, NodeAddr, NodeHostName) written as name, and a newline. */
static void append_renamed(char **buf, size_t *len, size_t *cap, const char *rec, const char *name)
{
	for (const char *p = rec; *p;) {
		const char *q = strstr(p, "gpu01");
		size_t k = q ? (size_t)(q - p) : strlen(p);
		size_t need = *len + k + strlen(name) + 2;
		if (need > *cap) {
			*cap = need * 2;
			*buf = xp_realloc(*buf, *cap);
		}
		memcpy(*buf + *len, p, k);
		*len += k;
		if (!q)
			break;
		memcpy(*buf + *len, name, strlen(name));
		*len += strlen(name);
		p = q + 5;
	}
	(*buf)[(*len)++] = '\n';
	(*buf)[*len] = '\0';
}

START_TEST(thousands_of_nodes)
{
	char *rec = first_record();
	char *buf = NULL, name[32];
	size_t len = 0, cap = 0;
	for (int i = 0; i < COUNT; i++) {
		snprintf(name, sizeof name, "g%05d", i);
		append_renamed(&buf, &len, &cap, rec, name);
	}
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_cluster_new();
	ck_assert_msg(xp_slurm_parse_nodes(buf, len, WHAT, c, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(c->n_nodes, COUNT);
	ck_assert_str_eq(c->nodes[0]->name, "g00000");
	ck_assert_str_eq(c->nodes[COUNT - 1]->name, "g04999");
	ck_assert_uint_eq(xp_cluster_device_count(c), (size_t)COUNT * 8);
	/* Read again into the same cluster: its first record names a node the cluster holds. */
	ck_assert_int_eq(xp_slurm_parse_nodes(buf, len, WHAT, c, &err), -1);
	xp_want_parts(err.msg, WHAT, "line 1", "g00000", "listed twice", NULL);
	ck_assert_uint_eq(c->n_nodes, COUNT);
	xp_cluster_free(c);
	/* The last record repeats the first, 5,000 lines before it. */
	append_renamed(&buf, &len, &cap, rec, "g00000");
	c = xp_cluster_new();
	ck_assert_int_eq(xp_slurm_parse_nodes(buf, len, WHAT, c, &err), -1);
	xp_want_parts(err.msg, WHAT, "line 5001", "g00000", "listed twice", NULL);
	ck_assert_uint_eq(c->n_nodes, COUNT);
	xp_cluster_free(c);
	free(buf);
	free(rec);
}
END_TEST

XP_DEFINE_SUITE(slurm_scale, {"nodes", .tests = {thousands_of_nodes}})
